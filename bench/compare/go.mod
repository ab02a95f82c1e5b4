module jobdesk/bench/compare

go 1.26.8

require jobdesk v0.0.0

require (
	github.com/riverqueue/river v0.47.0 // indirect
	github.com/riverqueue/river/riverdriver v0.47.0 // indirect
	github.com/riverqueue/river/riverdriver/riversqlite v0.47.0 // indirect
	github.com/riverqueue/river/rivershared v0.47.0 // indirect
	github.com/riverqueue/river/rivertype v0.47.0 // indirect
	github.com/tidwall/gjson v1.19.0 // indirect
	github.com/tidwall/match v1.2.0 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	golang.org/x/sync v0.22.0 // indirect
	maragu.dev/goqite v0.4.0 // indirect
)

replace jobdesk => ../..
