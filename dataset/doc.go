// Package dataset reads and writes the tables of inputs that Knobs runs a
// preset over: one row per case, one column per {{variable}} of the
// preset, an optional reference answer and optional tags. It parses and
// checks files only; storing datasets is the store's job.
//
// The rules below are shown to users in the dataset help.
//
// # A dataset file
//
// Upload a CSV file (.csv, comma- or semicolon-separated), a tab-separated
// file (.tsv), or a JSON Lines file (.jsonl), or paste the same text (a
// spreadsheet's copied cells are tab-separated). The file must be UTF-8 (a byte
// order mark at the start is allowed and ignored), at most 50 MB, with at
// most 100,000 rows; one value is at most 1 MB.
//
// # CSV and tab-separated files
//
// The first line is the header: it names the columns. Each name is either a
// variable of the preset (letters, digits and _, starting with a letter
// or _, at most 64 characters, such as question or user_name) or one of two
// special columns: "expected", the reference answer a grader compares with,
// and "tags", labels for filtering (separated by commas, semicolons or
// spaces; each is lowercased and is 1 to 32 of a-z, 0-9, - and _; at most
// 20 per row). Names are compared ignoring case, so "Name" and "name"
// cannot both be columns. Spaces around a name are ignored.
//
// Every following line is a row, with exactly as many values as the header
// has names. Blank lines are skipped. A value that holds a comma, a quote
// or a line break is written in double quotes, with each quote inside it
// doubled: "She said ""hi"", then left". Such a value may span lines.
// Line breaks inside values are kept as line feeds (a CR LF becomes LF).
//
// Spreadsheet safety: a value that Knobs exports starting with =, +, -, @,
// a tab or ' gets one ' in front of it, so that a spreadsheet shows it as
// text instead of running it as a formula. Reading a CSV or tab-separated
// file removes that one ' again: a value starting with ' followed by one
// of those characters loses its first '. So an export reads back exactly,
// and a value a spreadsheet user protected with ' arrives without it.
// Exports also start with a byte order mark, so that spreadsheets read
// them as UTF-8, and a variable a row has no value for is exported as an
// empty value (CSV cannot tell the two apart; JSON Lines can).
//
// An empty "expected" value means the row has no reference answer. An
// empty variable value is a value: the variable is filled with nothing.
//
// # JSON Lines files
//
// One JSON object per line; blank lines are skipped. Either the variables
// are grouped:
//
//	{"vars": {"question": "What is 2+2?"}, "expected": "4", "tags": ["math"]}
//
// or they are the object's own keys, beside the optional "expected" and
// "tags":
//
//	{"question": "What is 2+2?", "expected": "4", "tags": "math, easy"}
//
// Values are strings; a number or true/false is taken as its JSON text
// (1.50 stays "1.50"); null means the row has no value for that variable
// (or no reference answer); objects and arrays are refused. "tags" is an
// array of strings or one string split as in CSV. The columns are the
// variables in the order they first appear.
//
// # Errors
//
// A file with any problem is refused whole, with the line and column of
// the first problem ("line 14, column 3: ..."). Lines count from 1, as an
// editor shows them; columns count bytes from the start of the line, which
// is the character position as long as the line has only plain ASCII
// before that point. Problems with the file as a whole (too large, no rows)
// have no position.
package dataset
