#!/usr/bin/env python3
"""Compares the Linux and the Windows build's results on the same files (scripts/test-windows.sh):
the CSV job's summary and the conversions' metadata and Markdown must be the same once paths,
ids, hashes of paths and times are set aside.
Usage: test-windows-compare.py LINUX_DIR WINDOWS_DIR WINEPREFIX"""
import json, os, re, sys

VARYING = re.compile(r'(^id$|Id$|_id$|_at$|Arn$|[Tt]ime|Seconds$|path$|Path$|^source$|Csv$|Xlsx$|Key$|^cached$|^executionId$|^name$)')


def norm(v):
    if isinstance(v, dict):
        return {k: norm(x) for k, x in sorted(v.items()) if not VARYING.search(k)}
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def lines(path):
    with open(path, encoding='utf-8') as f:
        return [json.loads(l) for l in f if l.strip().startswith('{')]


def unix_path(p, prefix):
    if re.match(r'^[A-Za-z]:\\', p):
        drive = p[0].lower()
        rest = p[3:].replace('\\', '/')
        return '/' + rest if drive == 'z' else os.path.join(prefix, 'drive_' + drive, rest)
    return p


def markdown(rec, prefix):
    with open(unix_path(rec['output_path'], prefix), encoding='utf-8') as f:
        return f.read().replace('\r\n', '\n')


def main():
    lin, win, prefix = sys.argv[1:4]
    bad = 0
    lc, wc = lines(os.path.join(lin, 'csv.json'))[-1], lines(os.path.join(win, 'csv.json'))[-1]
    if lc['status'] != 'SUCCEEDED' or norm(lc) != norm(wc):
        print('csv job differs:\n linux  ', json.dumps(norm(lc), ensure_ascii=False), '\n windows', json.dumps(norm(wc), ensure_ascii=False))
        bad += 1
    else:
        print('csv job: same summary:', wc['result']['summaryJa'], '/', wc['result']['encoding'])
    ld, wd = lines(os.path.join(lin, 'convert.json')), lines(os.path.join(win, 'convert.json'))
    if len(ld) != len(wd):
        print('convert: %d results on Linux, %d on Windows' % (len(ld), len(wd)))
        return 1
    for l, w in zip(ld, wd):
        if l['status'] != 'SUCCEEDED' or norm(l) != norm(w):
            print('convert %s differs:\n linux  %s\n windows %s' % (l['name'], json.dumps(norm(l), ensure_ascii=False), json.dumps(norm(w), ensure_ascii=False)))
            bad += 1
        elif markdown(l, prefix) != markdown(w, prefix):
            print('convert %s: the Markdown differs' % l['name'])
            bad += 1
        else:
            print('convert %s: same metadata and Markdown (%d characters)' % (w['name'], len(markdown(w, prefix))))
    ll, wl = lines(os.path.join(lin, 'ls.json')), lines(os.path.join(win, 'ls.json'))
    if [(j['type'], j['name'], j['status']) for j in ll] != [(j['type'], j['name'], j['status']) for j in wl]:
        print('ls differs:', [(j['type'], j['name'], j['status']) for j in ll], [(j['type'], j['name'], j['status']) for j in wl])
        bad += 1
    else:
        print('ls: same %d jobs' % len(wl))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
