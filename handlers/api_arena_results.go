package handlers

import (
	"context"
	"encoding/csv"
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"knobs/arena"
	"knobs/dataset"
	"knobs/db"
)

// ArenaResults is what an arena's votes say: the ranking with 95%
// intervals, the win-rate matrix, position bias, and per prompt and per
// voter.
type ArenaResults struct {
	Votes        int                `json:"votes"`
	Blind        bool               `json:"blind" doc:"false when the arena is a speed demo: voters watched the answers stream, so speed could tell them which model was which."`
	Contestants  []ArenaStanding    `json:"contestants" nullable:"false" doc:"Highest score first."`
	PositionBias ArenaPositionBias  `json:"position_bias"`
	Matrix       [][]ArenaMatchCell `json:"matrix" doc:"matrix[i][j]: how contestant i (by index) did against j."`
	PerPrompt    []ArenaPromptVotes `json:"per_prompt" nullable:"false"`
	PerVoter     []ArenaVoterVotes  `json:"per_voter" nullable:"false"`
}

// ArenaStanding is one contestant's place.
type ArenaStanding struct {
	Index   int     `json:"index"`
	Name    string  `json:"name"`
	Wins    int     `json:"wins"`
	Losses  int     `json:"losses"`
	Ties    int     `json:"ties"`
	BothBad int     `json:"both_bad"`
	Votes   int     `json:"votes"`
	Score   float64 `json:"score" doc:"Bradley–Terry, on an Elo-like scale: 1000 is average, +400 is ten times the odds."`
	CILow   float64 `json:"ci_low" doc:"95% bootstrap interval."`
	CIHigh  float64 `json:"ci_high"`
}

// ArenaPositionBias is how often the answer shown first won.
type ArenaPositionBias struct {
	Decisive int     `json:"decisive" doc:"Votes for A or B (not tie or both bad)."`
	AWins    int     `json:"a_wins"`
	Share    float64 `json:"share" doc:"0.5 means no bias."`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
}

// ArenaMatchCell is one contestant against another.
type ArenaMatchCell struct {
	Games int     `json:"games"`
	Wins  int     `json:"wins"`
	Ties  int     `json:"ties"`
	Share float64 `json:"share" doc:"(wins + ties/2) / games; 0 when they never met."`
}

// ArenaPromptVotes is how the votes on one prompt went.
type ArenaPromptVotes struct {
	Prompt int    `json:"prompt"`
	Text   string `json:"text"`
	Votes  int    `json:"votes"`
	Wins   []int  `json:"wins" doc:"Wins per contestant index."`
}

// ArenaVoterVotes is how one voter voted.
type ArenaVoterVotes struct {
	Voter string `json:"voter" doc:"A name the voter gave, else a number."`
	Votes int    `json:"votes"`
	AWins int    `json:"a_wins"`
}

// ArenaResultsOutput answers the results.
type ArenaResultsOutput struct {
	Body ArenaResults
}

// arenaResults ranks an arena's votes.
func (h *Handler) arenaResults(ctx context.Context, a db.Arena) (ArenaResults, error) {
	cs, err := h.store.ArenaContestants(ctx, a.ID)
	if err != nil {
		return ArenaResults{}, err
	}
	pairs, err := h.store.ArenaPairs(ctx, a.ID, true)
	if err != nil {
		return ArenaResults{}, err
	}
	prompts, err := h.store.ArenaPrompts(ctx, a.ID)
	if err != nil {
		return ArenaResults{}, err
	}
	names, err := h.store.ArenaVoterNames(ctx, a.ID)
	if err != nil {
		return ArenaResults{}, err
	}
	outs := make([]arena.Outcome, 0, len(pairs))
	perPrompt := map[int]*ArenaPromptVotes{}
	perVoter := map[string]*ArenaVoterVotes{}
	var voters []string
	for _, p := range pairs {
		o := arena.Outcome{A: p.A, B: p.B, Voter: p.Voter, Prompt: p.Prompt}
		switch p.Choice {
		case db.VoteA:
			o.Result = arena.AWins
		case db.VoteB:
			o.Result = arena.BWins
		case db.VoteTie:
			o.Result = arena.Tie
		default:
			o.Result = arena.BothBad
		}
		outs = append(outs, o)
		pv := perPrompt[p.Prompt]
		if pv == nil {
			pv = &ArenaPromptVotes{Prompt: p.Prompt, Wins: make([]int, len(cs))}
			if p.Prompt < len(prompts) {
				pv.Text = prompts[p.Prompt].Text
			}
			perPrompt[p.Prompt] = pv
		}
		pv.Votes++
		vv := perVoter[p.Voter]
		if vv == nil {
			voters = append(voters, p.Voter)
			vv = &ArenaVoterVotes{Voter: "voter " + strconv.Itoa(len(voters))}
			if n := names[p.Voter]; n != "" {
				vv.Voter = n + " (voter " + strconv.Itoa(len(voters)) + ")"
			}
			perVoter[p.Voter] = vv
		}
		vv.Votes++
		switch o.Result {
		case arena.AWins:
			pv.Wins[p.A]++
			vv.AWins++
		case arena.BWins:
			pv.Wins[p.B]++
		}
	}
	r, err := arena.Rank(len(cs), outs, arena.Options{Seed: uint64(a.ID)})
	if err != nil {
		return ArenaResults{}, err
	}
	out := ArenaResults{Votes: r.Votes, Blind: !a.ShowStreaming, Contestants: []ArenaStanding{}, PerPrompt: []ArenaPromptVotes{}, PerVoter: []ArenaVoterVotes{},
		PositionBias: ArenaPositionBias{Decisive: r.Position.Decisive, AWins: r.Position.AWins, Share: r.Position.Share, Low: r.Position.Low, High: r.Position.High}}
	for _, i := range r.Order {
		c := r.Contestants[i]
		out.Contestants = append(out.Contestants, ArenaStanding{Index: i, Name: cs[i].Name, Wins: c.Wins, Losses: c.Losses, Ties: c.Ties,
			BothBad: c.BothBad, Votes: c.Votes, Score: c.Score, CILow: c.Low, CIHigh: c.High})
	}
	for _, row := range r.Matrix {
		var cells []ArenaMatchCell
		for _, m := range row {
			cells = append(cells, ArenaMatchCell{Games: m.Games, Wins: m.Wins, Ties: m.Ties, Share: m.Share})
		}
		out.Matrix = append(out.Matrix, cells)
	}
	for i := range prompts {
		if pv := perPrompt[i]; pv != nil {
			out.PerPrompt = append(out.PerPrompt, *pv)
		}
	}
	for _, v := range voters {
		out.PerVoter = append(out.PerVoter, *perVoter[v])
	}
	return out, nil
}

// ArenaAPIResults answers an arena's results.
func (h *Handler) ArenaAPIResults(ctx context.Context, in *ArenaInput) (*ArenaResultsOutput, error) {
	a, err := h.apiArena(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	r, err := h.arenaResults(ctx, a)
	if err != nil {
		return nil, err
	}
	return &ArenaResultsOutput{Body: r}, nil
}

// ArenaVotesCSV downloads every vote of an arena: when, who (a number
// per voter), the prompt, the two contestants as shown, the choice and
// the reason.
func (h *Handler) ArenaVotesCSV(c *fiber.Ctx) error {
	id, err := pathID(c, "arena")
	if err != nil {
		return err
	}
	a, err := h.store.Arena(ctx(c), id)
	if errors.Is(err, db.ErrNotFound) {
		return &Problem{Status: fiber.StatusNotFound, Message: "There is no such arena."}
	} else if err != nil {
		return err
	}
	cs, err := h.store.ArenaContestants(ctx(c), a.ID)
	if err != nil {
		return err
	}
	prompts, err := h.store.ArenaPrompts(ctx(c), a.ID)
	if err != nil {
		return err
	}
	pairs, err := h.store.ArenaPairs(ctx(c), a.ID, true)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="knobs-arena-`+strconv.FormatInt(a.ID, 10)+`-votes.csv"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	w := csv.NewWriter(c.Response().BodyWriter())
	w.UseCRLF = true
	_ = w.Write([]string{"voted_at", "voter", "prompt", "prompt_text", "a", "b", "choice", "winner", "reason"})
	voters := map[string]int{}
	for _, p := range pairs {
		if voters[p.Voter] == 0 {
			voters[p.Voter] = len(voters) + 1
		}
		winner := ""
		switch p.Choice {
		case db.VoteA:
			winner = cs[p.A].Name
		case db.VoteB:
			winner = cs[p.B].Name
		}
		text := ""
		if p.Prompt < len(prompts) {
			text = prompts[p.Prompt].Text
		}
		rec := []string{p.VotedAt.UTC().Format(time.RFC3339), "voter " + strconv.Itoa(voters[p.Voter]), strconv.Itoa(p.Prompt + 1), text,
			cs[p.A].Name, cs[p.B].Name, p.Choice, winner, p.Reason}
		for i := range rec {
			rec[i] = dataset.SpreadsheetSafe(rec[i])
		}
		_ = w.Write(rec)
	}
	w.Flush()
	return w.Error()
}
