package ui

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// mdPicture matches a Markdown image: ![alt](dest) or ![alt](<dest>).
var mdPicture = regexp.MustCompile(`!\[([^\]]*)\]\((?:<([^>]*)>|([^)\s]*))\)`)

// pictureLinks turns the pictures a conversion extracted beside its Markdown (relative links
// into its _files folder) into links that open the picture file, named by their alt text, so the
// rendered view neither looks for them in the working folder nor draws a photo at full size.
// dir is the folder of the Markdown file; links with a scheme or an absolute path stay.
func pictureLinks(md, dir string) string {
	if dir == "" || !strings.Contains(md, "![") {
		return md
	}
	return mdPicture.ReplaceAllStringFunc(md, func(m string) string {
		s := mdPicture.FindStringSubmatch(m)
		alt, dest := s[1], s[2]
		if dest == "" {
			dest = s[3]
		}
		if dest == "" || strings.Contains(dest, "://") || filepath.IsAbs(dest) || strings.Contains(dest, "..") {
			return m
		}
		label := "🖼 " + alt
		if alt == "" {
			label = "🖼 " + filepath.Base(dest)
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(dest)))}
		return "[" + label + "](" + u.String() + ")"
	})
}
