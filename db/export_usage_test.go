package db

import "strings"

// UsageVersion is the schema version whose migration brings the usage
// roll-ups, found by its text so that the order migrations end up in
// does not matter.
func UsageVersion() int {
	for i, m := range migrations {
		if strings.Contains(m, "CREATE TABLE usage_daily (") {
			return i + 1
		}
	}
	return 0
}
