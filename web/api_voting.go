package web

import (
	"maps"
	"net/http"
	"reflect"
	"slices"

	"github.com/danielgtaylor/huma/v2"

	"knobs/handlers"
)

// votingServers is where a voting link's calls are: the site's root, not
// /api/v1, since they are the voting page's own routes.
var votingServers = []*huma.Server{{URL: "/", Description: "The Knobs site itself: a voting link's calls are outside /api/v1."}}

// votingAuth is what every voting call says of who may make it. They take
// no API token: the link is the key.
const votingAuth = " No API token: a public link needs no account (the voter is a cookie, knobs_voter, that the first GET /a/{token}/pair sets; send it back with every call) and no CSRF token; a team link needs a signed-in session."

// documentVoting adds an arena voting link's own calls, plain Fiber
// routes at the site's root, to the document, each with the site's root
// as its server, no security requirement, and the answers' schemas from
// the handlers' types. The pair's schema is PairAnswer's without a name
// on either side: GET /a/{token}/pair never names a contestant.
func documentVoting(api huma.API) {
	doc := api.OpenAPI()
	reg := doc.Components.Schemas
	reveal := reg.Schema(reflect.TypeFor[handlers.PairAnswer](), true, "PairAnswer")
	side := reg.SchemaFromRef(reg.Schema(reflect.TypeFor[handlers.PairSide](), true, "PairSide").Ref)
	blindSide := schemaWithout(side, "name")
	reg.Map()["VotingPairSide"] = blindSide
	blindPair := schemaWithout(reg.SchemaFromRef(reveal.Ref), "")
	blindPair.Properties["a"] = &huma.Schema{Ref: "#/components/schemas/VotingPairSide", Description: blindPair.Properties["a"].Description}
	blindPair.Properties["b"] = &huma.Schema{Ref: "#/components/schemas/VotingPairSide", Description: blindPair.Properties["b"].Description}
	blindPair.Description = "A pair as a voter gets it before the vote: the prompt and two answers, the contestants' names masked, and nothing that tells who wrote them (no names, models, providers, ids or timings)."
	reg.Map()["VotingPair"] = blindPair

	problem := doc.Paths["/arenas/{id}"].Get.Responses["default"]
	jsonOf := func(s *huma.Schema) map[string]*huma.MediaType {
		return map[string]*huma.MediaType{"application/json": {Schema: s}}
	}
	token := &huma.Param{Name: "token", In: "path", Required: true, Description: "The voting link's token: /a/{token} is the link.",
		Example: "q3XvL0aB3cD4eF5gH6iJ7k", Schema: &huma.Schema{Type: huma.TypeString, MaxLength: ptr(64)}}
	voting := func(op *huma.Operation) {
		op.Tags = []string{"Voting"}
		op.Servers = votingServers
		op.Security = []map[string][]string{}
		op.Description += votingAuth
		op.Parameters = append([]*huma.Param{token}, op.Parameters...)
		op.Responses["default"] = problem
		doc.AddOperation(op)
	}

	voting(&huma.Operation{
		OperationID: "get-voting-pair", Method: http.MethodGet, Path: "/a/{token}/pair",
		Summary:     "The voter's next pair: a prompt and two answers, A and B, with nothing that tells who wrote them",
		Description: "The pair the voter was given and has not voted on, else a new one drawn to even out the comparisons, its sides in random order. 409 while the answers are being made or when there is no pair left (an open arena: write a prompt first); 403 once the voter has given their votes; 402 when a live arena's budget is spent; 410 once voting has ended. A live arena with the speed demo on answers Accept: text/event-stream with the pair as it is made: events prompt {text}; text {side, at, text} (side a or b: its shown text from at, in UTF-16 units, is now text, masked); then pair (the pair, as the JSON answer) or problem {status, error}, the last event.",
		Responses: map[string]*huma.Response{"200": {Description: "The pair.", Content: map[string]*huma.MediaType{
			"application/json":  {Schema: &huma.Schema{Ref: "#/components/schemas/VotingPair"}},
			"text/event-stream": {Schema: &huma.Schema{Type: huma.TypeString}},
		}}},
	})
	voting(&huma.Operation{
		OperationID: "vote", Method: http.MethodPost, Path: "/a/{token}/vote",
		Summary:     "Vote on the voter's pair (once); answers the reveal: who wrote which answer, and the answers as written",
		Description: "404 when the pair is not the voter's; 409 when they have voted on it already; 422 with fields for a bad choice, reason or name.",
		RequestBody: &huma.RequestBody{Required: true, Content: jsonOf(reg.Schema(reflect.TypeFor[handlers.ArenaVoteInput](), true, "ArenaVoteInput"))},
		Responses:   map[string]*huma.Response{"200": {Description: "The reveal: the pair with each side's name and its text unmasked.", Content: jsonOf(reveal)}},
	})
	voting(&huma.Operation{
		OperationID: "add-voting-prompt", Method: http.MethodPost, Path: "/a/{token}/prompt",
		Summary:     "Write a prompt of the voter's own in an open arena; their next pair is on it",
		Description: "409 when the arena's prompts are set, or it has all the prompts it takes; 422 for an empty or too long prompt.",
		RequestBody: &huma.RequestBody{Required: true, Content: jsonOf(reg.Schema(reflect.TypeFor[handlers.ArenaPromptInput](), true, "ArenaPromptInput"))},
		Responses:   map[string]*huma.Response{"201": {Description: "The prompt was added.", Content: jsonOf(reg.Schema(reflect.TypeFor[handlers.ArenaPromptAdded](), true, "ArenaPromptAdded"))}},
	})
}

// schemaWithout is a copy of an object schema without the property drop
// ("" drops none), whose properties can be changed without changing s.
func schemaWithout(s *huma.Schema, drop string) *huma.Schema {
	c := *s
	c.Properties = maps.Clone(s.Properties)
	delete(c.Properties, drop)
	c.Required = slices.DeleteFunc(slices.Clone(s.Required), func(name string) bool { return name == drop })
	return &c
}
