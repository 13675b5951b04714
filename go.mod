module github.com/updeb/updeb

go 1.26.0

require (
	github.com/spf13/cobra v1.10.2
	github.com/ulikunitz/xz v0.5.17
)

require (
	github.com/ProtonMail/go-crypto v1.5.2
	github.com/blakesmith/ar v0.0.0-20190502131153-809d4375e1fb
	github.com/klauspost/compress v1.20.3
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/sync v0.24.0
)

require (
	github.com/cloudflare/circl v1.6.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/crypto v0.41.0 // indirect
	golang.org/x/sys v0.35.0 // indirect
)
