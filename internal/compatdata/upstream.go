package compatdata

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/yamlfile"
)

// The parsers of upstream's documents, one per format. Each is strict about
// what updeb uses (the table's columns, each cell's form, every row) and
// names the line of the first problem; what updeb does not use may change.

var (
	helmCellRE     = regexp.MustCompile(`^([0-9]+\.[0-9]+)\.[xX]$`)
	helmRangeRE    = regexp.MustCompile(`^([0-9]+\.[0-9]+)\.[xX]\s*-\s*([0-9]+\.[0-9]+)\.[xX]$`)
	kubernetesRE   = regexp.MustCompile(`^v?([0-9]+\.[0-9]+)$`)
	criAtLeastRE   = regexp.MustCompile(`^≥\s*([0-9]+\.[0-9]+)\.[xX]$`)
	criBetweenRE   = regexp.MustCompile(`^≥\s*([0-9]+\.[0-9]+)\.[xX]\s*≤\s*([0-9]+\.[0-9]+)\.[xX]$`)
	criOneMinorRE  = regexp.MustCompile(`^([0-9]+\.[0-9]+)\.[xX]$`)
	imageRevision  = regexp.MustCompile(`-[0-9]+$`)
	istioVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
)

// cellMinor checks that s is a canonical MAJOR.MINOR.
func cellMinor(line int, what, s string) (string, error) {
	if _, ok := parseMinor(s); !ok {
		return "", lineError(line, "%s %q is not a MAJOR.MINOR", what, s)
	}
	return s, nil
}

// parseHelm reads Helm's version skew page (docs/topics/version_skew.mdx
// for Helm 4, versioned_docs/version-3/... for Helm 3): the table "Helm
// Version | Supported Kubernetes Versions", rows "4.2.x | 1.36.x - 1.33.x"
// (the newest Kubernetes first).
func parseHelm(doc document) ([]Row, error) {
	md, err := doc.markdown()
	if err != nil {
		return nil, err
	}
	const helmCol, kubeCol = "helm version", "supported kubernetes versions"
	rows, err := pipeTable(md, 0, len(md.lines), "", helmCol, kubeCol)
	if err != nil {
		return nil, err
	}
	var out []Row
	for _, r := range rows {
		h := helmCellRE.FindStringSubmatch(r.cells[helmCol])
		k := helmRangeRE.FindStringSubmatch(r.cells[kubeCol])
		if h == nil || k == nil {
			return nil, lineError(r.line, "expected \"X.Y.x | 1.NN.x - 1.MM.x\", found %q | %q", r.cells[helmCol], r.cells[kubeCol])
		}
		row := HelmRow{Helm: h[1], KubernetesRange: KubernetesRange{KubernetesMin: k[2], KubernetesMax: k[1]}}
		for _, s := range []string{row.Helm, row.KubernetesMin, row.KubernetesMax} {
			if _, err := cellMinor(r.line, "version", s); err != nil {
				return nil, err
			}
		}
		if err := row.check(); err != nil {
			return nil, lineError(r.line, "%v (upstream writes the newest first)", err)
		}
		out = append(out, row)
	}
	return out, nil
}

// parseContainerd reads containerd's RELEASES.md: in the section
// "Kubernetes Support", the table "Kubernetes Version | containerd Version |
// CRI Version", rows "1.36 | 2.3.0+, 2.2.0+ | v1". The section's other table,
// "Containerd Version | Kubernetes Version | ..." (deprecated versions), has
// the same columns the other way round: the first column tells them apart.
func parseContainerd(doc document) ([]Row, error) {
	md, err := doc.markdown()
	if err != nil {
		return nil, err
	}
	at, err := findHeading(md, "Kubernetes Support")
	if err != nil {
		return nil, err
	}
	level, _ := md.heading(at)
	end := len(md.lines)
	for i := at + 1; i < len(md.lines); i++ {
		if l, _ := md.heading(i); l > 0 && l <= level {
			end = i
			break
		}
	}
	const kubeCol, ctrCol, criCol = "kubernetes version", "containerd version", "cri version"
	rows, err := pipeTable(md, at+1, end, kubeCol, kubeCol, ctrCol)
	if err != nil {
		return nil, err
	}
	var out []Row
	for _, r := range rows {
		k, err := cellMinor(r.line, "Kubernetes version", r.cells[kubeCol])
		if err != nil {
			return nil, err
		}
		row := ContainerdRow{Kubernetes: k, CRI: r.cells[criCol]}
		for _, c := range strings.Split(r.cells[ctrCol], ",") {
			c = strings.TrimSpace(c)
			if !containerdVersionRE.MatchString(c) {
				return nil, lineError(r.line, "containerd version %q is not X.Y.Z+ or X.Y (in %q)", c, r.cells[ctrCol])
			}
			row.Containerd = append(row.Containerd, c)
		}
		if err := checkText(row.CRI, false); err != nil {
			return nil, lineError(r.line, "CRI version: %v", err)
		}
		out = append(out, row)
	}
	return out, nil
}

// parseIstio reads istio.io's data/compatibility/supportStatus.yml: a YAML
// list of {version: "1.22", k8sVersions: ["1.27", ...], ...}, newest first;
// "master" and entries such as "1.6 and earlier" without versions are skipped. k8sVersions must be a list (an older form wrote one
// comma-separated string) of minors one apart.
func parseIstio(doc document) ([]Row, error) {
	if _, err := doc.lines(); err != nil {
		return nil, err
	}
	d := &yamlfile.Decoder{}
	top := d.Document(doc.body, yamlfile.Options{What: "Istio support status file", Empty: "no entries", MaxSize: len(doc.body)})
	if top != nil && top.Kind != yaml.SequenceNode {
		d.At(top, "expected a list of Istio versions, found %s", yamlfile.KindName(top))
		top = nil
	}
	var out []Row
	if top != nil {
		for _, n := range top.Content {
			if !d.Record(func(rd *yamlfile.Decoder) {
				if r, ok := istioEntry(rd, n); ok {
					out = append(out, r)
				}
			}) {
				break
			}
		}
	}
	if fs := d.Findings(); len(fs) > 0 {
		return nil, lineError(fs[0].Line, "%s", fs[0].Message)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Istio version with Kubernetes versions")
	}
	return out, nil
}

// istioEntry reads one entry; ok is false for "master".
func istioEntry(d *yamlfile.Decoder, n *yaml.Node) (Row, bool) {
	var version string
	var k8s, versionNode *yaml.Node
	d.Map(n, yamlfile.Map{What: "entry", Each: func(k, v *yaml.Node) {
		switch k.Value {
		case "version":
			versionNode = v
			d.Str(v, "version", &version)
		case "k8sVersions":
			k8s = v
		}
	}})
	switch {
	case d.Len() > 0:
		return nil, false
	case versionNode == nil:
		d.At(n, "entry without a version")
		return nil, false
	case version == "master":
		return nil, false
	case !istioVersionRE.MatchString(version) && (k8s == nil || k8s.Kind == yaml.ScalarNode && k8s.Value == ""):
		return nil, false // "1.6 and earlier": no versions to read
	case !istioVersionRE.MatchString(version):
		d.At(versionNode, "version %q is not MAJOR.MINOR", version)
		return nil, false
	case k8s == nil || k8s.Kind != yaml.SequenceNode || len(k8s.Content) == 0:
		at := n
		if k8s != nil {
			at = k8s
		}
		d.At(at, "istio %s: k8sVersions must be a non-empty list of Kubernetes versions", version)
		return nil, false
	}
	var list KubernetesList
	for _, v := range k8s.Content {
		if v.Kind != yaml.ScalarNode || !kubernetesRE.MatchString(v.Value) {
			d.At(v, "istio %s: k8sVersions: %s is not a Kubernetes MAJOR.MINOR", version, yamlfile.KindName(v))
			return nil, false
		}
		list = append(list, strings.TrimPrefix(v.Value, "v"))
	}
	if _, ok := parseMinor(version); !ok {
		d.At(versionNode, "version %q is not MAJOR.MINOR", version)
		return nil, false
	}
	if err := list.check(); err != nil {
		d.At(k8s, "istio %s: %v", version, err)
		return nil, false
	}
	return IstioRow{Istio: version, KubernetesRange: KubernetesRange{KubernetesMin: list[0], KubernetesMax: list[len(list)-1]}}, true
}

// parseKubeadm reads kubeadm's cmd/kubeadm/app/constants/constants.go as Go
// source: the map SupportedEtcdVersion (Kubernetes minor -> etcd image tag,
// "3.6.7-0") and MinExternalEtcdVersion. The image revision is dropped.
func parseKubeadm(doc document) ([]Row, error) {
	if _, err := doc.lines(); err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "constants.go", doc.body, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("not Go source (truncated?): %v", err)
	}
	var supported *ast.CompositeLit
	var minExternal string
	var problems []error
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if i >= len(vs.Values) {
				break
			}
			switch name.Name {
			case "SupportedEtcdVersion":
				if supported != nil {
					problems = append(problems, lineError(fset.Position(name.Pos()).Line, "SupportedEtcdVersion declared twice"))
				}
				supported, _ = vs.Values[i].(*ast.CompositeLit)
				if supported == nil {
					problems = append(problems, lineError(fset.Position(name.Pos()).Line, "SupportedEtcdVersion is not a map literal"))
				}
			case "MinExternalEtcdVersion":
				v, err := goString(vs.Values[i])
				if err != nil {
					problems = append(problems, lineError(fset.Position(name.Pos()).Line, "MinExternalEtcdVersion: %v", err))
				}
				minExternal = v
			}
		}
		return true
	})
	switch {
	case len(problems) > 0:
		return nil, problems[0]
	case supported == nil:
		return nil, fmt.Errorf("no SupportedEtcdVersion map: the file has changed, or this is not kubeadm's constants.go")
	case minExternal == "":
		return nil, fmt.Errorf("no MinExternalEtcdVersion: the file has changed, or this is not kubeadm's constants.go")
	}
	minExt := imageRevision.ReplaceAllString(minExternal, "")
	if !isPatchVersion(minExt) {
		return nil, fmt.Errorf("MinExternalEtcdVersion %q is not X.Y.Z[-N]", minExternal)
	}
	if mt, ok := supported.Type.(*ast.MapType); !ok || !isIdent(mt.Key, "uint8") || !isIdent(mt.Value, "string") {
		return nil, lineError(fset.Position(supported.Pos()).Line, "SupportedEtcdVersion is not a map[uint8]string")
	}
	var out []Row
	seen := map[string]bool{}
	for _, e := range supported.Elts {
		line := fset.Position(e.Pos()).Line
		kv, ok := e.(*ast.KeyValueExpr)
		var key *ast.BasicLit
		if ok {
			key, ok = kv.Key.(*ast.BasicLit)
		}
		if !ok || key.Kind != token.INT {
			return nil, lineError(line, "SupportedEtcdVersion: expected MINOR: \"X.Y.Z-N\"")
		}
		n, err := strconv.ParseUint(key.Value, 10, 8)
		if err != nil {
			return nil, lineError(line, "SupportedEtcdVersion: key %s is not a Kubernetes minor", key.Value)
		}
		v, err := goString(kv.Value)
		etcd := imageRevision.ReplaceAllString(v, "")
		if err != nil || !isPatchVersion(etcd) {
			return nil, lineError(line, "SupportedEtcdVersion[%d]: expected \"X.Y.Z-N\", found %s", n, v)
		}
		k := "1." + strconv.FormatUint(n, 10)
		if seen[k] {
			return nil, lineError(line, "SupportedEtcdVersion: minor %d given twice", n)
		}
		seen[k] = true
		out = append(out, KubeadmEtcdRow{Kubernetes: k, Etcd: etcd, MinExternal: minExt})
	}
	if len(out) == 0 {
		return nil, lineError(fset.Position(supported.Pos()).Line, "SupportedEtcdVersion is empty")
	}
	return out, nil
}

func isIdent(e ast.Expr, name string) bool { id, ok := e.(*ast.Ident); return ok && id.Name == name }

// goString is the value of a Go string literal.
func goString(e ast.Expr) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", fmt.Errorf("expected a string literal")
	}
	return strconv.Unquote(lit.Value)
}

// parseCalico reads Calico's system requirements for one Calico minor
// (calico_versioned_docs/version-MINOR/_includes/partials/_system-requirements.mdx):
// the bullet list after the heading "Supported versions".
func parseCalico(doc document) ([]Row, error) {
	md, err := doc.markdown()
	if err != nil {
		return nil, err
	}
	if _, ok := parseMinor(doc.minor); !ok {
		return nil, fmt.Errorf("which Calico minor? the URL needs %s", MinorPlaceholder)
	}
	at, err := findHeading(md, "Supported versions")
	if err != nil {
		return nil, err
	}
	list, err := bulletMinors(md.lines, at, func(i int) bool { l, _ := md.heading(i); return l > 0 })
	if err != nil {
		return nil, err
	}
	return []Row{CalicoRow{Calico: doc.minor, Kubernetes: list}}, nil
}

// parseCilium reads Cilium's Kubernetes requirements for one Cilium minor
// (Documentation/network/kubernetes/requirements.rst on branch vMINOR): the
// bullet list after the reStructuredText section "Kubernetes Version".
func parseCilium(doc document) ([]Row, error) {
	lines, err := doc.lines()
	if err != nil {
		return nil, err
	}
	if _, ok := parseMinor(doc.minor); !ok {
		return nil, fmt.Errorf("which Cilium minor? the URL needs %s", MinorPlaceholder)
	}
	isHeading := func(i int) bool { return rstHeading(lines, i) }
	at := -1
	for i := range lines {
		if isHeading(i) && strings.TrimSpace(lines[i]) == "Kubernetes Version" {
			if at >= 0 {
				return nil, lineError(i+1, "a second \"Kubernetes Version\" section (the first at line %d)", at+1)
			}
			at = i
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("no \"Kubernetes Version\" section: the page has changed, or this is not the page")
	}
	list, err := bulletMinors(lines, at+1, isHeading)
	if err != nil {
		return nil, err
	}
	return []Row{CiliumRow{Cilium: doc.minor, Kubernetes: list}}, nil
}

// rstHeading reports whether lines[i] is a reStructuredText section title:
// text underlined by a line of one punctuation character at least as long.
func rstHeading(lines []string, i int) bool {
	t := strings.TrimSpace(lines[i])
	if t == "" || i+1 >= len(lines) || strings.ContainsAny(t[:1], "=-*~^#") {
		return false
	}
	u := strings.TrimSpace(lines[i+1])
	return len(u) >= len(t) && strings.Count(u, u[:1]) == len(u) && strings.ContainsAny(u[:1], "=-~^*#")
}

// parseCRITools reads cri-tools' README.md: the table "Kubernetes Version |
// cri-tools Version", rows "≥ 1.27.x | ≥ 1.27.x" (the same minor from then
// on), "≥ 1.16.x ≤ 1.26.x | ≥ 1.16.x ≤ 1.26.x" or "1.15.X | v1.15.0" (one
// release).
func parseCRITools(doc document) ([]Row, error) {
	md, err := doc.markdown()
	if err != nil {
		return nil, err
	}
	const kubeCol, toolCol = "kubernetes version", "cri-tools version"
	rows, err := pipeTable(md, 0, len(md.lines), "", kubeCol, toolCol)
	if err != nil {
		return nil, err
	}
	var out []Row
	for _, r := range rows {
		k, tool := r.cells[kubeCol], r.cells[toolCol]
		var row CRIToolsRow
		if m := criBetweenRE.FindStringSubmatch(k); m != nil {
			row = CRIToolsRow{KubernetesMin: m[1], KubernetesMax: m[2], CRITools: SameMinor}
		} else if m := criAtLeastRE.FindStringSubmatch(k); m != nil {
			row = CRIToolsRow{KubernetesMin: m[1], CRITools: SameMinor}
		} else if m := criOneMinorRE.FindStringSubmatch(k); m != nil {
			row = CRIToolsRow{KubernetesMin: m[1], KubernetesMax: m[1], CRITools: strings.TrimPrefix(tool, "v")}
		} else {
			return nil, lineError(r.line, "Kubernetes version %q: expected \"≥ 1.NN.x\", \"≥ 1.NN.x ≤ 1.MM.x\" or \"1.NN.X\"", k)
		}
		if row.CRITools == SameMinor && !strings.EqualFold(strings.Join(strings.Fields(tool), " "), strings.Join(strings.Fields(k), " ")) {
			return nil, lineError(r.line, "cri-tools version %q: expected the Kubernetes range %q (the same minor)", tool, k)
		}
		for _, s := range []string{row.KubernetesMin, row.KubernetesMax} {
			if _, err := cellMinor(r.line, "Kubernetes version", s); s != "" && err != nil {
				return nil, err
			}
		}
		if err := row.check(); err != nil {
			return nil, lineError(r.line, "%v", err)
		}
		for _, prev := range out {
			if p := prev.(CRIToolsRow); p.Covers(row.KubernetesMin) || row.Covers(p.KubernetesMin) {
				return nil, lineError(r.line, "Kubernetes %s overlaps the row %q", k, p)
			}
		}
		out = append(out, row)
	}
	return out, nil
}
