module github.com/updeb/updeb

go 1.26

require (
	github.com/spf13/cobra v1.10.2
	github.com/ulikunitz/xz v0.5.17
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
