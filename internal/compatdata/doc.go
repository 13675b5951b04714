// Package compatdata holds upstream's compatibility tables as data with a
// source and a date, and keeps them current: Helm's version skew
// (helm-www), containerd's "Kubernetes Support" (RELEASES.md), Istio's
// supported Kubernetes versions (istio.io's supportStatus.yml), kubeadm's etcd
// versions (constants.go), Calico's and Cilium's supported Kubernetes versions
// (their docs, per minor) and cri-tools' compatibility matrix (README.md).
//
// Three copies exist, all in one format (Parse, Encode): the bundled one
// (data/compat.yaml, Bundled), always there; the state folder's refreshed
// copy (STATE/support/compat.yaml, beside internal/supportdata's eol.yaml);
// and a recipes repository's data file (RepositoryFile, compat-data.yaml
// beside release-sets.yaml), which also holds the end-of-life data and the
// operator's overrides, each with a reason. Load picks what commands use: the
// repository's file when it exists (the same answer on every machine for the
// same commit), else each table from whichever of the refreshed and bundled
// copies has it newer (its own as_of).
//
// Refresh fetches every table through a Getter (*fetch.Fetcher: the proxy,
// mirrors, timeouts, retries), parses each answer with the parser of its
// format (strict: the table's columns, every cell's form, every row; named
// lines in errors), checks it is plausible (rows only for minors the
// end-of-life data knows, bounds in order, no row dropped unless its minors
// are end-of-life or AllowDropped), and replaces the copies atomically. It
// goes table by table: a table refused (SourceError, DroppedError, a
// download's error) keeps its copy in use, rows, sources and as_of, while the
// others are written (Result.Kept, KeptError); only when no table refreshed
// does it write nothing (RefreshError).
//
// For callers (compat, plan): Load(stateDir, repositoryFile) returns a Set:
// Set.Tables and Set.EOL (a *supportdata.Copy). Tables.HelmFor,
// ContainerdFor, IstioFor, KubeadmEtcdFor, CalicoFor, CiliumFor and
// CRIToolsFor return the effective row for a version (Match: the row, the
// Override that replaced upstream's if any, the Table with its Copy and
// AsOf); Table.Effective lists a table's rows with the overrides applied
// (made once, when the table is read: lookups neither copy nor sort, and
// may run from many goroutines); Set.Status is `updeb data status`.
package compatdata
