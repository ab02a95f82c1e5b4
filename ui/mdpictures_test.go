package ui

import (
	"path/filepath"
	"testing"
)

func TestPictureLinks(t *testing.T) {
	dir := filepath.Join(string(filepath.Separator)+"data", "documents")
	md := "前\n\n![倉庫の写真](deck_1234abcd_files/Picture4.png) と ![](<報告 書_files/image1.png>) と ![x](https://example.jp/a.png)"
	got := pictureLinks(md, dir)
	want := "前\n\n[🖼 倉庫の写真](file:///data/documents/deck_1234abcd_files/Picture4.png) と [🖼 image1.png](file:///data/documents/%E5%A0%B1%E5%91%8A%20%E6%9B%B8_files/image1.png) と ![x](https://example.jp/a.png)"
	if filepath.Separator == '/' && got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if pictureLinks(md, "") != md {
		t.Fatal("without a folder the Markdown must stay as it is")
	}
}
