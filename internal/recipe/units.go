package recipe

import (
	_ "embed"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/systemdunit"
)

// A systemd unit installs cleanly whatever it says: dpkg copies it, the
// postinst runs daemon-reload, and only "systemctl start" on each node
// finds a command that is not there, a user no node has, a line systemd
// ignored. Load reads each unit a recipe ships from its own folder and
// says so first, as systemd 252 (Debian 12's) would read it. A finding is
// what systemd refuses or what fails every start (no ExecStart=, a command
// or user that cannot be there, a unit where systemd never looks, a line or
// section it drops); a warning what fails where the recipe cannot know (a
// command or environment file another package may bring), what systemd
// drops with a warning (a key it does not know: perhaps a newer systemd's),
// and a unit "systemctl enable" cannot enable.

// unitFile is a file a package installs where systemd looks for units.
type unitFile struct {
	file, dest *yaml.Node // the mapping's file: and dest: values
	field      string     // what dest is: "dest", "symlink dest"
	path       string     // dest
	local      string     // the recipe folder's file, "" for an upstream one or a symlink
}

// unitDirs are where systemd 252 reads system units, as Debian builds it,
// and what a package installs there means. /lib and /usr/lib are one folder
// on merged /usr, and both are read where /usr is not merged; lintian
// 2.116 takes either.
var unitDirs = []struct{ dir, wrong string }{
	{"/lib/systemd/system/", ""},
	{"/usr/lib/systemd/system/", ""},
	{"/etc/systemd/system/", "is the administrator's folder, whose units override the packages' (lintian's error systemd-service-in-odd-location): install the unit in /lib/systemd/system"},
	{"/usr/local/lib/systemd/system/", "is under /usr/local, which no Debian package may install into (Debian Policy 9.1.2): install the unit in /lib/systemd/system"},
	{"/run/systemd/system/", "is emptied at every boot: install the unit in /lib/systemd/system"},
}

// maxUnitProblems is the most problems of one unit file lint reports line
// by line.
const maxUnitProblems = 10

// execKeys are the settings whose value is a command line.
var execKeys = []string{"ExecCondition", "ExecStartPre", "ExecStart", "ExecStartPost", "ExecReload", "ExecStop", "ExecStopPost"}

//go:embed basecommands.txt
var baseCommandsText string

// baseCommands are the commands every Debian 12 system has, by the names
// merged /usr gives them (/usr/bin/sh for /bin/sh).
var baseCommands = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(baseCommandsText, "\n") {
		if strings.HasPrefix(l, "/") {
			m[l] = true
		}
	}
	return m
}()

// unitPlace says where systemd takes the file at dest: typ is the unit's
// type for a unit or a drop-in of one ("" for neither), dropIn whether it is
// a drop-in (NAME.d/*.conf); bad is why systemd never reads it, or reads
// what a package must not install. ok is false for a path nowhere near a
// unit folder.
func unitPlace(dest string) (typ string, dropIn bool, bad string, ok bool) {
	for _, d := range unitDirs {
		rest, found := strings.CutPrefix(dest, d.dir)
		if !found {
			continue
		}
		dir, base := path.Split(rest)
		switch {
		case dir == "":
			if typ = systemdunit.Type(base); typ == "" {
				return "", false, fmt.Sprintf("systemd reads only units here (NAME.service, .socket, .timer, .path, .mount, .target, ...), and never %s", base), true
			}
		case strings.Count(dir, "/") == 1 && strings.HasSuffix(dir, ".d/"):
			unit := strings.TrimSuffix(dir, ".d/")
			if typ = systemdunit.Type(unit); typ == "" {
				// "service.d/" holds drop-ins for every service
				if _, all := map[string]bool{"service": true, "socket": true, "timer": true, "path": true, "mount": true, "target": true, "slice": true}[unit]; all {
					typ = unit
				}
			}
			if typ == "" || !strings.HasSuffix(base, ".conf") {
				return "", false, fmt.Sprintf("systemd reads only drop-ins named *.conf in a folder UNIT.d/ of a unit's name, and never %s", rest), true
			}
			dropIn = true
		case strings.Count(dir, "/") == 1 && (strings.HasSuffix(dir, ".wants/") || strings.HasSuffix(dir, ".requires/")):
			return "", false, "", true // the links that enable a unit: not a unit file
		default:
			return "", false, fmt.Sprintf("systemd reads no subfolder but UNIT.d/, UNIT.wants/ and UNIT.requires/, and never %s", rest), true
		}
		if d.wrong != "" {
			bad = strings.TrimSuffix(d.dir, "/") + " " + d.wrong
		}
		return typ, dropIn, bad, true
	}
	return "", false, "", false
}

// unitContext is what a unit of one package may rely on in the recipe.
type unitContext struct {
	pp       *ResolvedPackage
	rp       Package
	ships    map[string]string // merged-/usr path -> the package installing it
	byBase   map[string]string // base name of a command -> its path in the recipe
	users    map[string]bool   // the recipe's system users
	groups   map[string]bool
	complete bool            // every path of the recipe resolved: what it does not install is not there
	depends  map[string]bool // the package itself and those it depends on, which every node with it has
	outside  bool            // the package depends on a package not of the recipe, which may bring a command or file
}

// checkUnits checks the units each package installs (Load only: it reads
// the recipe's files).
func (r *Recipe) checkUnits(pps []ResolvedPackage, fs *findings) {
	// A path refused or left unrendered is missing from what the recipe
	// installs: a command or file "not installed" would be that finding
	// again, at the unit.
	complete := fs.Len() == 0
	ships, byBase := map[string]string{}, map[string]string{}
	users, groups := map[string]bool{}, map[string]bool{}
	names := map[string]bool{}
	for i, pp := range pps {
		names[pp.Name] = true
		add := func(p string) {
			ships[usrMerged(p)] = pp.Name
			if inBinDir(p) {
				byBase[path.Base(p)] = p
			}
		}
		for _, f := range pp.Files {
			add(f.Dest)
		}
		for _, l := range slices.Concat(pp.Symlinks, pp.Hardlinks) {
			add(l.Dest)
		}
		for _, a := range pp.alternatives {
			add(a.Link)
		}
		if u := r.Packages[i].SystemUser; u != nil {
			users[u.Name] = true
			groups[u.Name] = groups[u.Name] || u.Group
		}
	}
	for i := range pps {
		pp := &pps[i]
		uc := &unitContext{pp: pp, rp: r.Packages[i], ships: ships, byBase: byBase, users: users, groups: groups, complete: complete}
		uc.depends = map[string]bool{pp.Name: true}
		for j, rel := range slices.Concat(pp.PreDepends, pp.Depends, pp.Recommends) {
			groups, _ := deb.ParseRelations("Depends", rel) // resolving refused a bad one already
			for _, alts := range groups {
				for _, alt := range alts {
					if !names[alt.Name] && !IsBasePackage(alt.Name) {
						uc.outside = true
					}
					// Only a package every installation has: no alternative
					// of several, no Recommends (apt --no-install-recommends).
					if len(alts) == 1 && j < len(pp.PreDepends)+len(pp.Depends) {
						uc.depends[alt.Name] = true
					}
				}
			}
		}
		for _, u := range pp.unitFiles {
			r.checkUnit(uc, u, fs)
		}
	}
}

// checkUnit checks where one unit file is and, for the recipe's own files,
// what it says.
func (r *Recipe) checkUnit(uc *unitContext, u unitFile, fs *findings) {
	typ, dropIn, bad, _ := unitPlace(u.path)
	if bad != "" {
		fs.at(u.dest, "%s: %s: %s", u.field, u.path, bad)
		return
	}
	if typ == "" || u.local == "" {
		return
	}
	name := path.Base(u.path)
	if dropIn {
		name = strings.TrimSuffix(path.Base(path.Dir(u.path)), ".d")
	}
	data, err := r.readUnit(u.local)
	if err != nil {
		fs.at(u.file, "file: %v", err)
	}
	if data == nil {
		return
	}
	unit, problems := systemdunit.Parse(data)
	at := func(line int) string { return fmt.Sprintf("file: %s line %d", path.Base(u.local), line) }
	problems = append(problems, unit.Check(typ)...)
	if len(problems) > maxUnitProblems {
		// A file that is no unit at all (a binary, a script named
		// x.service) would be one finding a line.
		first := slices.MinFunc(problems, func(a, b systemdunit.Problem) int { return a.Line - b.Line }).Line
		fs.at(u.file, "file: %s: %d lines systemd would ignore or refuse, the first at line %d: is it a unit file?", path.Base(u.local), len(problems), first)
		problems = problems[:maxUnitProblems]
	}
	for _, p := range problems {
		if p.Warning {
			fs.warn(u.file, "%s: %s", at(p.Line), p.Message)
		} else {
			fs.at(u.file, "%s: %s", at(p.Line), p.Message)
		}
	}
	for _, key := range execKeys {
		for _, e := range unit.Values(systemdunit.TypeSection(typ), key) {
			uc.checkCommand(fs, u, e, at(e.Line))
		}
	}
	uc.checkAccounts(fs, u, unit, typ, at)
	for _, e := range unit.Values(systemdunit.TypeSection(typ), "EnvironmentFile") {
		file := expandSpecifiers(e.Value, name)
		if strings.HasPrefix(file, "-") || strings.Contains(file, "%") {
			continue // optional, or a specifier only the node knows
		}
		if _, ok := uc.ships[usrMerged(file)]; !ok && uc.complete {
			fs.warn(u.file, "%s: EnvironmentFile=%s is installed by no package of the recipe: systemd refuses to start %s where it is missing (\"Failed to load environment files\"); install it (a conffile, in files), or write EnvironmentFile=-%s if the service runs without it", at(e.Line), file, name, file)
		}
	}
	if dropIn {
		return
	}
	if typ == "service" {
		r.checkService(fs, u, unit, name, at)
	}
	uc.checkInstall(fs, u, unit, typ, name)
}

// readUnit reads a unit file of the recipe's folder, at most
// systemdunit.MaxSize bytes of it; nil and no error for one it cannot open,
// which Load's file check (checkLocal) reports already.
func (r *Recipe) readUnit(local string) ([]byte, error) {
	fh, _, err := r.OpenLocal(local)
	if err != nil {
		return nil, nil //nolint:nilerr // checkLocal's finding
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, systemdunit.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", local, err)
	}
	if len(data) > systemdunit.MaxSize {
		return nil, fmt.Errorf("%s is over %d bytes: no systemd unit is that large; name the unit file itself", local, systemdunit.MaxSize)
	}
	return data, nil
}

// checkService finds what makes systemd refuse a service: no command at
// all, or two ExecStart= where only Type=oneshot may have more than one.
func (r *Recipe) checkService(fs *findings, u unitFile, unit *systemdunit.Unit, name string, at func(int) string) {
	starts := unit.Values("Service", "ExecStart")
	_, stop := unit.Last("Service", "ExecStop")
	_, success := unit.Last("Unit", "SuccessAction")
	typ, _ := unit.Last("Service", "Type")
	switch {
	case len(starts) == 0 && !stop && !success:
		fs.at(u.file, "file: %s: service %s has no ExecStart= (systemd refuses it: \"Service has no ExecStart=, ExecStop=, or SuccessAction=\"): add ExecStart=/usr/bin/COMMAND under [Service]", path.Base(u.local), name)
	case len(starts) > 1 && typ.Value != "oneshot":
		fs.at(u.file, "%s: a second ExecStart= (systemd refuses the service: only Type=oneshot may have more than one): run the others in ExecStartPre= or ExecStartPost=", at(starts[1].Line))
	}
}

// checkCommand checks one Exec*= setting: its quoting, and that the
// command it runs is there on a node with the package.
func (uc *unitContext) checkCommand(fs *findings, u unitFile, e systemdunit.Entry, at string) {
	cmds, err := systemdunit.SplitCommands(e.Value)
	if err != nil {
		fs.at(u.file, "%s: %s=: %v", at, e.Key, err)
		return
	}
	for _, c := range cmds {
		p := c.Path()
		if c.IgnoresFailure() || p == "" || strings.ContainsAny(p, "%$") || !strings.HasPrefix(p, "/") && strings.Contains(p, "/") {
			continue // "-": systemd goes on without it; a specifier or variable only the node knows; a relative path, which systemd refuses itself
		}
		written := p
		if !strings.HasPrefix(p, "/") {
			// A bare name: systemd 252 runs the first of its fixed
			// search path that is there.
			for _, dir := range []string{"/usr/local/sbin/", "/usr/local/bin/", "/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/"} {
				if _, ok := uc.ships[usrMerged(dir+p)]; ok || baseCommands[usrMerged(dir+p)] {
					p = dir + p
					break
				}
			}
		}
		if pkg, ok := uc.ships[usrMerged(p)]; ok && !uc.depends[pkg] && uc.complete {
			fs.at(u.file, "%s: %s=%s is installed by package %s, which package %s does not depend on: where %s is not installed, systemd fails every start (\"Command %s is not executable\"); add %s to the depends of %s, or install the command in %s", at, e.Key, written, pkg, uc.pp.Name, pkg, written, pkg, uc.pp.Name, uc.pp.Name)
			continue
		} else if ok || baseCommands[usrMerged(p)] || !uc.complete {
			continue
		}
		p = written
		switch where, ok := uc.byBase[path.Base(p)]; {
		case ok:
			fs.at(u.file, "%s: %s=%s names a command the recipe installs as %s: systemd fails every start (\"Command %s is not executable\"); write %s", at, e.Key, p, where, p, where)
		case strings.HasPrefix(p, "/usr/local/"):
			fs.at(u.file, "%s: %s=%s is under /usr/local, which no Debian package installs into (the administrator's): systemd fails every start where it is not; run the command where the package installs it", at, e.Key, p)
		case !uc.outside:
			fs.at(u.file, "%s: %s=%s is installed by no package of the recipe, nor by any package of every Debian system, and package %s depends on no other: systemd fails every start (\"Command %s is not executable\"); install it (files), correct the path, or depend on the package that ships it", at, e.Key, p, uc.pp.Name, p)
		default:
			fs.warn(u.file, "%s: %s=%s is installed by no package of the recipe, nor by any package of every Debian system: systemd fails every start where it is missing; if a package %s depends on ships it, all is well (dpkg -S %s names it)", at, e.Key, p, uc.pp.Name, p)
		}
	}
}

// checkAccounts checks User= and Group=: an account no node has fails
// every start ("Failed to determine user credentials").
func (uc *unitContext) checkAccounts(fs *findings, u unitFile, unit *systemdunit.Unit, typ string, at func(int) string) {
	section := systemdunit.TypeSection(typ)
	if d, ok := unit.Last(section, "DynamicUser"); ok && slices.Contains([]string{"yes", "true", "on", "1"}, strings.ToLower(d.Value)) {
		return // systemd makes the account when the service starts
	}
	for _, c := range []struct {
		key   string
		known func(string) bool
		how   string
	}{
		{"User", func(n string) bool { _, base := baseUsers[n]; return base || uc.users[n] }, "system-user: {name: NAME} (adduser --system in the postinst)"},
		{"Group", func(n string) bool { _, base := baseGroups[n]; return base || uc.groups[n] }, "system-user: {name: NAME} (its group of the same name)"},
	} {
		e, ok := unit.Last(section, c.key)
		if !ok || e.Value == "" || strings.Contains(e.Value, "%") || strings.Trim(e.Value, "0123456789") == "" || c.known(e.Value) {
			continue
		}
		fs.at(u.file, "%s: %s=%s is no account of base-passwd (every Debian system's) nor the system-user of a package of the recipe: systemd fails every start (\"Failed to determine user credentials\"); add %s to the package, or run it as an account every node has", at(e.Line), c.key, e.Value, c.how)
	}
}

// checkInstall warns at a unit "systemctl enable" cannot enable: one with
// no [Install] WantedBy=, RequiredBy=, Alias= or Also= ("The unit files have
// no installation config"), save what starts it otherwise: a template, a
// oneshot, a service whose timer, path or socket the recipe installs
// (lintian's systemd-service-file-missing-install-key, widened to the units
// that enable one).
func (uc *unitContext) checkInstall(fs *findings, u unitFile, unit *systemdunit.Unit, typ, name string) {
	if !slices.Contains([]string{"service", "socket", "timer", "path"}, typ) || strings.Contains(name, "@") {
		return
	}
	for _, k := range []string{"WantedBy", "RequiredBy", "Alias", "Also"} {
		if len(unit.Values("Install", k)) > 0 {
			return
		}
	}
	if t, _ := unit.Last("Service", "Type"); t.Value == "oneshot" && typ == "service" {
		return
	}
	stem := strings.TrimSuffix(name, "."+typ)
	for _, other := range []string{"timer", "path", "socket"} {
		if typ != "service" {
			break
		}
		for _, d := range SystemdUnitDirs {
			if _, ok := uc.ships[usrMerged(d+stem+"."+other)]; ok {
				return
			}
		}
	}
	fs.warn(u.file, "file: %s: %s has no [Install] section with WantedBy= (lintian's systemd-service-file-missing-install-key): \"systemctl enable %s\" enables nothing (\"The unit files have no installation config\"); add [Install] with WantedBy=multi-user.target (timers.target for a timer, sockets.target for a socket)", path.Base(u.local), name, name)
}

// expandSpecifiers expands the specifiers of a unit's name in s (%n, %N,
// %p, %i, %%), as systemd does; the rest stay, for the caller to skip.
func expandSpecifiers(s, name string) string {
	full := name
	stem := strings.TrimSuffix(name, path.Ext(name))
	prefix, instance, _ := strings.Cut(stem, "@")
	return strings.NewReplacer("%%", "%%", "%n", full, "%N", stem, "%p", prefix, "%i", instance).Replace(s)
}
