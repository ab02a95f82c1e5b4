package docjob

import "testing"

// TestMailHeaderReported: a mail's conversion reports its header fields decoded (ISO-2022-JP and
// UTF-8 encoded words, Outlook's properties), so a window can show them without reading the
// Markdown; other documents report none.
func TestMailHeaderReported(t *testing.T) {
	eml := convertOK(t, japaneseMail(t), "見積.eml")
	if eml.Mail == nil || eml.Mail.Subject != "【至急】見積書の送付" || eml.Mail.From != "yamada@example.jp (山田 太郎)" ||
		eml.Mail.Cc != "kacho@example.jp" {
		t.Errorf("EML header %+v", eml.Mail)
	}
	msg := convertOK(t, makeMSG(t, false), "議事録.msg")
	want := MailHeader{From: "yamada@example.jp (山田 太郎)", To: "suzuki@example.jp (鈴木 花子)", Cc: "kacho@example.jp (課長)",
		Date: "Wed, 27 Nov 2024 09:00:00 +0000", Subject: "【議事録】定例会議"}
	if msg.Mail == nil || *msg.Mail != want {
		t.Errorf("MSG header %+v; want %+v", msg.Mail, want)
	}
	var res Result
	res.fill(msg)
	if res.Mail == nil || res.Mail.Subject != want.Subject {
		t.Errorf("result header %+v", res.Mail)
	}
	if txt := convertOK(t, []byte("plain text\n"), "a.txt"); txt.Mail != nil {
		t.Errorf("a text file reports a mail header: %+v", txt.Mail)
	}
}
