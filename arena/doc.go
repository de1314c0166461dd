// Package arena ranks the contestants of a blind arena from its votes.
package arena
