package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/field"
	"knobs/llm"
	"knobs/preset"
)

// ImportPreset reads a preset file, a raw request body or a curl command,
// saves it as a new preset of the user's and opens it in the playground.
func (h *Handler) ImportPreset(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	data := []byte(strings.TrimSpace(c.FormValue("text")))
	if fh, err := c.FormFile("file"); err == nil && fh.Size > 0 {
		if fh.Size > preset.MaxSize {
			return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": fmt.Sprintf("The file is %d bytes; a preset file has at most %d.", fh.Size, preset.MaxSize)})
		}
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, fh.Size)
		if _, err := io.ReadFull(f, buf); err != nil {
			return err
		}
		data = buf
	}
	if len(data) == 0 {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": "Choose a file or paste something to import."})
	}
	file, err := preset.Import(data)
	var ie *preset.ImportError
	if errors.As(err, &ie) {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": ie.Problem})
	} else if err != nil {
		return err
	}
	if file.Spec.Provider == "" {
		file.Spec.Provider = "sim" // the request did not say where it was sent: try it offline first
	}
	prov, err := h.findProvider(ctx(c), file.Spec.Provider)
	if errors.Is(err, errNoProvider) {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": "The file is for the provider " + strconv.Quote(file.Spec.Provider) + ", which this Knobs does not have."})
	} else if err != nil {
		return err
	}
	if fields := llm.Validate(file.Spec, prov.Dialect, modelInfo(prov, file.Spec.Model())); len(fields) > 0 {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": "Nothing was imported: " + fields.Describe()})
	}
	name := file.Name
	if name == "" {
		name = "Imported " + time.Now().Format("2 Jan 15:04")
	}
	spec, _ := json.Marshal(file.Spec)
	p, fe, err := h.createPreset(c, db.Preset{
		OwnerID: u.ID, Name: name, Description: file.Description, Tags: file.Tags,
		Visibility: db.PresetPrivate, Spec: string(spec), Variables: file.Variables,
	})
	if !fe.Empty() {
		return h.renderPresets(c, fiber.StatusUnprocessableEntity, field.Errors{"import": "Nothing was imported: " + fe.Describe()})
	} else if err != nil {
		return err
	}
	asked, err := h.loadPreset(c, u.ID, p)
	if err != nil {
		return err
	}
	msg := "Imported as the preset " + p.Name + "."
	if asked {
		msg += " Your playground has unsaved changes: choose whether to open it there."
	}
	if len(file.Dropped) > 0 {
		sort.Strings(file.Dropped)
		msg += " Left out: " + strings.Join(file.Dropped, ", ") + "."
	}
	return redirectWith(c, "/", msg)
}
