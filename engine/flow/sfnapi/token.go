package sfnapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sort"
	"strings"
)

// Pagination of the lists the engine answers whole (state machines, map runs). A token names
// the list it belongs to (kind and a hash of the request's scope) and the sort key of the last
// item given, so a page is stable while items are added or deleted, and a token from another
// list or a damaged one is refused with InvalidToken rather than misread.

const tokenVersion = "sfnapi1"

// pageToken encodes the position after key in the list of kind and scope.
func pageToken(kind, scope, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(tokenVersion + "\x00" + kind + "\x00" + scopeHash(scope) + "\x00" + key))
}

func scopeHash(scope string) string {
	h := sha256.Sum256([]byte(scope))
	return hex.EncodeToString(h[:8])
}

// parseToken returns the key a token of kind and scope carries ("" for no token).
func parseToken(kind, scope, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", typed("InvalidToken", "Invalid Token: the nextToken is damaged")
	}
	parts := strings.SplitN(string(b), "\x00", 4)
	if len(parts) != 4 || parts[0] != tokenVersion || parts[1] != kind || parts[2] != scopeHash(scope) {
		return "", typed("InvalidToken", "Invalid Token: the nextToken belongs to another list")
	}
	return parts[3], nil
}

// page sorts items by key and returns those after the token's key, at most max, with the token
// of the next page ("" on the last page).
func page[T any](items []T, key func(T) string, kind, scope, token string, max int) ([]T, string, error) {
	after, err := parseToken(kind, scope, token)
	if err != nil {
		return nil, "", err
	}
	sort.SliceStable(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
	start := 0
	if token != "" {
		start = sort.Search(len(items), func(i int) bool { return key(items[i]) > after })
	}
	items = items[start:]
	if len(items) <= max {
		return items, "", nil
	}
	items = items[:max]
	return items, pageToken(kind, scope, key(items[len(items)-1])), nil
}
