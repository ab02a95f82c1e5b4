#!/usr/bin/env bash
# Regenerates the committed test corpus of engine/docjob from text written here, with Debian tools:
#   apt-get install -y libreoffice-writer-nogui libreoffice-calc-nogui qpdf poppler-utils fonts-noto-cjk
# Usage: testdata/gen.sh            (writes the corpus next to this script)
#        testdata/gen.sh bench DIR  (writes the 24- and 240-page benchmark PDFs into DIR; not committed)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
export HOME="$work"   # LibreOffice keeps its profile here, not in the user's home

NS='xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" xmlns:xlink="http://www.w3.org/1999/xlink"'

# odt_head MODE COLUMNS: document start; MODE lr-tb or tb-rl (vertical Japanese).
odt_head() {
cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<office:document $NS office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
<office:font-face-decls><style:font-face style:name="Noto Sans CJK JP" svg:font-family="'Noto Sans CJK JP'"/></office:font-face-decls>
<office:styles>
<style:default-style style:family="paragraph"><style:text-properties style:font-name="Noto Sans CJK JP" style:font-name-asian="Noto Sans CJK JP" fo:font-size="10.5pt" style:font-size-asian="10.5pt" fo:language="ja" fo:country="JP" style:language-asian="ja" style:country-asian="JP"/></style:default-style>
<style:style style:name="Heading_20_1" style:display-name="Heading 1" style:family="paragraph" style:default-outline-level="1"><style:text-properties fo:font-size="16pt" style:font-size-asian="16pt" fo:font-weight="bold"/></style:style>
<style:style style:name="Heading_20_2" style:display-name="Heading 2" style:family="paragraph" style:default-outline-level="2"><style:text-properties fo:font-size="13pt" style:font-size-asian="13pt" fo:font-weight="bold"/></style:style>
<text:list-style style:name="Num"><text:list-level-style-number text:level="1" style:num-format="1" style:num-suffix="."/></text:list-style>
<text:list-style style:name="Bul"><text:list-level-style-bullet text:level="1" text:bullet-char="•"/></text:list-style>
</office:styles>
<office:automatic-styles>
<style:page-layout style:name="pm1"><style:page-layout-properties fo:page-width="21cm" fo:page-height="29.7cm" fo:margin-top="2cm" fo:margin-bottom="2cm" fo:margin-left="2cm" fo:margin-right="2cm" style:writing-mode="$1"/><style:header-style/><style:footer-style/></style:page-layout>
<style:style style:name="PB" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style>
<style:style style:name="Sect2" style:family="section"><style:section-properties><style:columns fo:column-count="2" fo:column-gap="1cm"/></style:section-properties></style:style>
</office:automatic-styles>
<office:master-styles><style:master-page style:name="Standard" style:page-layout-name="pm1">$2</style:master-page></office:master-styles>
<office:body><office:text>
EOF
}
odt_tail() { echo '</office:text></office:body></office:document>'; }

# report: headings, ruby, footnote, tracked changes, lists, merged table, text box, header/footer, 3 pages.
{
odt_head lr-tb '<style:header><text:p>社外秘 ヘッダー</text:p></style:header><style:footer><text:p>株式会社サンプル フッター</text:p></style:footer>'
cat <<'EOF'
<text:tracked-changes>
<text:changed-region text:id="ct1"><text:insertion><office:change-info><dc:creator>山田</dc:creator><dc:date>2024-04-01T09:00:00</dc:date></office:change-info></text:insertion></text:changed-region>
<text:changed-region text:id="ct2"><text:deletion><office:change-info><dc:creator>山田</dc:creator><dc:date>2024-04-01T09:00:00</dc:date></office:change-info><text:p>削除された古い文言</text:p></text:deletion></text:changed-region>
</text:tracked-changes>
<text:h text:style-name="Heading_20_1" text:outline-level="1">補助金申請の手引き</text:h>
<text:p>本書は<text:ruby><text:ruby-base>申請</text:ruby-base><text:ruby-text>しんせい</text:ruby-text></text:ruby>の手順を説明します。Mixed English text: JobDesk converts documents offline.<text:note text:id="ftn1" text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>脚注：令和6年度の公募要領に基づく。</text:p></text:note-body></text:note></text:p>
<text:p>変更履歴：<text:change-start text:change-id="ct1"/>追加された新しい文言<text:change-end text:change-id="ct1"/>を確認<text:change text:change-id="ct2"/>してください。</text:p>
<text:h text:style-name="Heading_20_2" text:outline-level="2">申請に必要な書類</text:h>
<text:list text:style-name="Bul"><text:list-item><text:p>事業計画書</text:p></text:list-item><text:list-item><text:p>見積書の写し</text:p></text:list-item></text:list>
<text:list text:style-name="Num"><text:list-item><text:p>申請書を作成する</text:p></text:list-item><text:list-item><text:p>電子申請で提出する</text:p></text:list-item></text:list>
<table:table table:name="表1"><table:table-column table:number-columns-repeated="3"/>
<table:table-row><table:table-cell office:value-type="string"><text:p>区分</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>上限額</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>補助率</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell table:number-rows-spanned="2" office:value-type="string"><text:p>小規模事業者</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>50万円</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>2/3</text:p></table:table-cell></table:table-row>
<table:table-row><table:covered-table-cell/><table:table-cell table:number-columns-spanned="2" office:value-type="string"><text:p>特例枠は200万円</text:p></table:table-cell><table:covered-table-cell/></table:table-row>
</table:table>
<text:p><draw:frame draw:name="枠1" text:anchor-type="paragraph" svg:width="8cm" svg:height="2cm"><draw:text-box><text:p>テキストボックスの注意書き</text:p></draw:text-box></draw:frame>問い合わせ先は事務局です。</text:p>
<text:p text:style-name="PB">第2ページ：審査の観点について説明します。</text:p>
<text:p text:style-name="PB">第3ページ：よくある質問と回答。</text:p>
EOF
odt_tail
} > "$work/report.fodt"

# two columns: the left column's text must come before the right column's.
{
odt_head lr-tb ''
echo '<text:h text:style-name="Heading_20_1" text:outline-level="1">二段組みの文書</text:h><text:section text:style-name="Sect2" text:name="s1">'
for i in $(seq 1 12); do echo "<text:p>左段の本文その${i}。段組みの読み順を確認するための文章です。</text:p>"; done
echo '<text:p text:style-name="PB2">右段の始まり。</text:p>'
for i in $(seq 1 6); do echo "<text:p>右段の本文その${i}。続きの文章です。</text:p>"; done
echo '</text:section>'
odt_tail
} > "$work/twocol.fodt"
sed -i 's#<style:style style:name="PB" #<style:style style:name="PB2" style:family="paragraph"><style:paragraph-properties fo:break-before="column"/></style:style><style:style style:name="PB" #' "$work/twocol.fodt"

# vertical Japanese (tb-rl)
{
odt_head tb-rl ''
echo '<text:p>縦書きの文章です。</text:p><text:p>一行目の次に二行目が続きます。</text:p><text:p>令和六年四月一日</text:p>'
odt_tail
} > "$work/vertical.fodt"

# KANGXI RADICALS in the text layer (U+2F00 一, U+2F08 人, U+2F47 日): must fold to 一 人 日.
{
odt_head lr-tb ''
printf '<text:p>部首の文字：\xe2\xbc\x80\xe2\xbc\x88\xe2\xbd\x87本</text:p>\n'
odt_tail
} > "$work/kangxi.fodt"

# spreadsheet: dates, Japanese era, currency, percentage, formula, merged cells, hidden sheet.
cat > "$work/book.fods" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<office:document $NS office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:automatic-styles>
<number:date-style style:name="Nd"><number:year number:style="long"/><number:text>/</number:text><number:month number:style="long"/><number:text>/</number:text><number:day number:style="long"/></number:date-style>
<number:date-style style:name="Ne" number:language="ja" number:country="JP"><number:era number:style="long" number:calendar="gengou"/><number:year number:calendar="gengou"/><number:text>年</number:text><number:month/><number:text>月</number:text><number:day/><number:text>日</number:text></number:date-style>
<number:currency-style style:name="Nc"><number:currency-symbol number:language="ja" number:country="JP">￥</number:currency-symbol><number:number number:decimal-places="0" number:min-integer-digits="1" number:grouping="true"/></number:currency-style>
<number:percentage-style style:name="Np"><number:number number:decimal-places="1" number:min-integer-digits="1"/><number:text>%</number:text></number:percentage-style>
<style:style style:name="cd" style:family="table-cell" style:data-style-name="Nd"/>
<style:style style:name="ce" style:family="table-cell" style:data-style-name="Ne"/>
<style:style style:name="cc" style:family="table-cell" style:data-style-name="Nc"/>
<style:style style:name="cp" style:family="table-cell" style:data-style-name="Np"/>
<style:style style:name="hid" style:family="table"><style:table-properties table:display="false"/></style:style>
</office:automatic-styles>
<office:body><office:spreadsheet>
<table:table table:name="売上">
<table:table-row><table:table-cell office:value-type="string"><text:p>日付</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>和暦</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>品名</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>金額</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>税率</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>税込</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell table:style-name="cd" office:value-type="date" office:date-value="2024-04-01"/><table:table-cell table:style-name="ce" office:value-type="date" office:date-value="2024-04-01"/><table:table-cell office:value-type="string"><text:p>ノートPC</text:p></table:table-cell><table:table-cell table:style-name="cc" office:value-type="currency" office:currency="JPY" office:value="150000"/><table:table-cell table:style-name="cp" office:value-type="percentage" office:value="0.1"/><table:table-cell table:style-name="cc" table:formula="of:=[.D2]*(1+[.E2])" office:value-type="currency" office:currency="JPY" office:value="165000"/></table:table-row>
<table:table-row><table:table-cell table:style-name="cd" office:value-type="date" office:date-value="2019-05-01"/><table:table-cell table:style-name="ce" office:value-type="date" office:date-value="2019-05-01"/><table:table-cell office:value-type="string"><text:p>複合機</text:p></table:table-cell><table:table-cell table:style-name="cc" office:value-type="currency" office:currency="JPY" office:value="98000"/><table:table-cell table:style-name="cp" office:value-type="percentage" office:value="0.08"/><table:table-cell table:style-name="cc" table:formula="of:=[.D3]*(1+[.E3])" office:value-type="currency" office:currency="JPY" office:value="105840"/></table:table-row>
<table:table-row><table:table-cell table:number-columns-spanned="3" office:value-type="string"><text:p>合計（結合セル）</text:p></table:table-cell><table:covered-table-cell/><table:covered-table-cell/><table:table-cell table:style-name="cc" table:formula="of:=SUM([.D2:.D3])" office:value-type="currency" office:currency="JPY" office:value="248000"/></table:table-row>
</table:table>
<table:table table:name="非表示メモ" table:style-name="hid"><table:table-row><table:table-cell office:value-type="string"><text:p>隠しシートの内容</text:p></table:table-cell></table:table-row></table:table>
</office:spreadsheet></office:body></office:document>
EOF

soffice_to() { # soffice_to FORMAT OUTDIR FILE...
  local fmt="$1" out="$2"; shift 2
  soffice --headless --norestore --convert-to "$fmt" --outdir "$out" "$@" >/dev/null 2>&1
}

if [ "${1:-}" = bench ]; then
  out="${2:?usage: gen.sh bench DIR}"; mkdir -p "$out"
  for pages in 24 240; do
    { odt_head lr-tb ''
      for p in $(seq 1 "$pages"); do
        [ "$p" -gt 1 ] && echo "<text:p text:style-name=\"PB\">第${p}ページ</text:p>" || echo "<text:p>第${p}ページ</text:p>"
        for l in $(seq 1 14); do echo "<text:p>補助金の公募要領 第${p}章 ${l}項：申請者は事業計画書と見積書を提出し、審査を受けます。Eligibility ${p}-${l}.</text:p>"; done
      done
      odt_tail; } > "$work/bench${pages}.fodt"
  done
  soffice_to pdf "$out" "$work/bench24.fodt" "$work/bench240.fodt"
  ls -l "$out"
  exit 0
fi

out="$here"
soffice_to pdf "$work" "$work/report.fodt" "$work/twocol.fodt" "$work/vertical.fodt" "$work/kangxi.fodt"
soffice_to docx "$work" "$work/report.fodt"
soffice_to xlsx "$work" "$work/book.fods"
cp "$work/report.pdf" "$out/report.pdf"; cp "$work/twocol.pdf" "$out/twocol.pdf"
cp "$work/vertical.pdf" "$out/vertical.pdf"; cp "$work/report.docx" "$out/report.docx"
cp "$work/book.xlsx" "$out/book.xlsx"
# The KANGXI code points survive only if the font maps them; keep the PDF either way.
cp "$work/kangxi.pdf" "$out/kangxi.pdf"

# scan: a page rendered to a grey image (150 dpi, enough for OCR to read it) and wrapped as an image-only PDF (no text layer).
pdftoppm -r 150 -gray -singlefile -f 1 -l 1 "$work/report.pdf" "$work/scanimg"
python3 - "$work/scanimg.pgm" "$out/scan.pdf" <<'PY'
import sys, zlib
raw = open(sys.argv[1], 'rb').read()
parts = raw.split(maxsplit=4)          # P5 width height maxval data
w, h, data = int(parts[1]), int(parts[2]), parts[4]
img = zlib.compress(data[:w*h], 9)
pw, ph = 595, 842
content = b"q %d 0 0 %d 0 0 cm /Im0 Do Q" % (pw, ph)
objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>" % (pw, ph),
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n" % (w, h, len(img)) + img + b"\nendstream",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"]
out = bytearray(b"%PDF-1.4\n")
offs = []
for i, o in enumerate(objs, 1):
    offs.append(len(out)); out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
x = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
for o in offs: out += b"%010d 00000 n \n" % o
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
open(sys.argv[2], 'wb').write(out)
PY

# passwords: user password (AES-256, AES-128, RC4-40) cannot be opened; owner-only must convert.
qpdf --encrypt secret secret 256 -- "$work/report.pdf" "$out/pw_user_aes256.pdf"
qpdf --encrypt secret secret 128 --use-aes=y -- "$work/report.pdf" "$out/pw_user_aes128.pdf"
qpdf --allow-weak-crypto --encrypt secret secret 40 -- "$work/report.pdf" "$out/pw_user_rc4.pdf"
qpdf --encrypt "" owner 256 --print=none -- "$work/report.pdf" "$out/pw_owner_aes256.pdf"
qpdf --allow-weak-crypto --encrypt "" owner 128 -- "$work/report.pdf" "$out/pw_owner_rc4.pdf"
# Password-protected DOCX/XLSX (encrypted OLE containers) are made by the Go tests with
# excelize.Encrypt, the same ECMA-376 agile encryption Office writes.

# damaged: truncated files, garbage with a PDF name, a PDF whose startxref points nowhere.
head -c $(( $(stat -c %s "$work/report.pdf") / 2 )) "$work/report.pdf" > "$out/truncated.pdf"
head -c $(( $(stat -c %s "$work/report.docx") / 2 )) "$work/report.docx" > "$out/truncated.docx"
head -c $(( $(stat -c %s "$work/book.xlsx") / 2 )) "$work/book.xlsx" > "$out/truncated.xlsx"
head -c 4096 /dev/urandom > "$out/garbage.pdf"
python3 - "$work/report.pdf" "$out/badxref.pdf" <<'PY'
import re, sys
b = open(sys.argv[1], 'rb').read()
i = b.rindex(b'startxref')
m = re.match(rb'startxref\s+(\d+)', b[i:])
open(sys.argv[2], 'wb').write(b[:i] + b'startxref\n' + str(int(m.group(1)) + 37).encode() + b'\n%%EOF\n')
PY

# text in the encodings offices use
printf '氏名,部署,内線\n山田太郎,総務部,1001\n佐藤花子,経理部,1002\n' > "$work/u.csv"
iconv -f UTF-8 -t CP932 "$work/u.csv" > "$out/sjis.csv"
printf '\xef\xbb\xbf' > "$out/bom.csv"; cat "$work/u.csv" >> "$out/bom.csv"
printf 'お知らせ\n来週の会議は第二会議室で行います。\n' | iconv -f UTF-8 -t EUC-JP > "$out/eucjp.txt"
ls -l "$out"
