// Package grade scores the answers of an experiment: each grader reads
// one answer (and its row and run) and gives pass or fail, a score in
// [0, 1] and a short reason for the grid.
//
// A grader is a JSON object with a "type" and its settings; every grader
// may also carry a "name" (up to 64 characters) to show in the grid.
//
//	exact             the answer equals a value, or the row's expected answer
//	                  {"type":"exact","value":"Paris","ignore_case":true,"trim_space":true,"collapse_space":true}
//	                  Without "value", the row's expected answer. trim_space drops
//	                  spaces at both ends; collapse_space also turns every run of
//	                  spaces, tabs and newlines into one space.
//	contains          the answer contains the terms
//	                  {"type":"contains","terms":["Paris","France"],"mode":"all","ignore_case":true}
//	not_contains      the answer does not contain the terms
//	                  {"type":"not_contains","terms":["As an AI"],"mode":"all"}
//	                  mode "all" (the default) needs every term satisfied (present
//	                  for contains, absent for not_contains), "any" at least one.
//	                  The score is the share of terms satisfied. Up to 100 terms.
//	regex             the answer matches a regular expression (Go's RE2 syntax:
//	                  no lookaround or backreferences; matching takes linear time)
//	                  {"type":"regex","pattern":"^\\d{4}-\\d{2}-\\d{2}$","ignore_case":false,"must_not_match":false}
//	                  Up to 1,000 characters. Variables filled into a pattern are
//	                  matched as plain text.
//	json              the answer is valid JSON
//	                  {"type":"json","strip_fence":true}
//	                  strip_fence accepts an answer wrapped in a ```json fence, and
//	                  the reason says so.
//	json_schema       the answer is JSON that matches a JSON Schema
//	                  {"type":"json_schema","schema":{"type":"object","required":["city"]}}
//	                  {"type":"json_schema","schema":"response_format"}
//	                  "response_format" checks against the schema of the variant's
//	                  own response_format. Schemas up to 64 KiB; a $ref to a file
//	                  or URL is refused. A "pattern" using lookaround or
//	                  backreferences (valid in JSON Schema, unknown to Go's
//	                  regexp) is accepted and not checked. strip_fence as for json.
//	json_path_equals  a value inside the JSON answer equals a JSON value
//	                  {"type":"json_path_equals","path":"$.items[0].name","value":"apple"}
//	                  The path is $ followed by .key, ["key"] or [index], at most
//	                  32 steps. Numbers are equal when their values are (1 and 1.0).
//	                  strip_fence as for json.
//	length            the answer's length in characters or words
//	                  {"type":"length","min":10,"max":200,"unit":"words"}
//	                  unit "chars" (the default: Unicode characters) or "words"
//	                  (runs of letters between spaces); min, max or both.
//	latency           the run took at most max_ms milliseconds
//	                  {"type":"latency","max_ms":2000}
//	cost              the run cost at most max_usd dollars
//	                  {"type":"cost","max_usd":0.01}
//	                  A run whose cost is unknown (no price for its model) is a
//	                  grading error, not a pass.
//	judge             another preset reads the answer and scores it (see JudgeSpec)
//	                  {"type":"judge","preset":"tone judge","label":"production","scale":5,"pass_at":0.5}
//
// Templates: the value of exact, the terms of contains and not_contains,
// the pattern of regex and a string value of json_path_equals may hold
// {{expected}} (the row's expected answer) and {{name}} (the row's
// variable name), filled in before comparing. A row without the value a
// grader asks for is a grading error for that cell, never a silent fail.
//
// A grade and a grading error differ: an answer that is not what the
// grader wants (not JSON for json_path_equals, say) fails with a reason;
// a grader that cannot run at all on this cell (no expected answer to
// compare with, an unknown cost, a judge answer that cannot be read) is a
// grading error, shown as such and left out of the pass rates.
//
// The judge: its preset is filled with {{input}} (the row's prompt as
// sent: the variant's messages with the row's variables filled in),
// {{output}} (the answer), {{expected}} (the row's expected answer) and
// the row's variables by their names; see JudgeValues. It is asked for
// JSON matching JudgeSchema: {"score": number, "reason": "…"}, the score
// on the judge's scale (0 to 1 by default, or 1 to 5, or 1 to 10), and
// passes at pass_at (0.5 by default) once scaled to [0, 1].
package grade
