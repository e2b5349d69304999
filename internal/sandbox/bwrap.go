package sandbox

import (
	"os"
	"strconv"
)

// What of the host's /etc the code needs: the dynamic linker's cache and
// the alternatives its BLAS is found through (numpy), matplotlib's
// settings and fontconfig's, the time zone. Nothing else of /etc (no
// passwd, no shadow, no resolv.conf) exists inside.
var etcPaths = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/alternatives", "/etc/matplotlibrc", "/etc/fonts", "/etc/localtime",
}

// The top-level folders that are links into /usr on a merged-/usr system
// (Debian 12), or folders of their own on an older one.
var rootLinks = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// Where things are inside the sandbox.
const (
	workDir      = "/work"
	scriptPath   = "/sova/sova.py"
	fontListPath = "/sova/fontlist.json"
)

// bwrapArgs are bubblewrap's options for a sandbox: the mounts, then
// extra ones (the script), then the root made read-only and the
// environment.
//
// Why the limits are not here: bubblewrap has no option for rlimits, and
// setting them from Go on the bubblewrap process right after it starts
// (prlimit(2)) races with bubblewrap cloning the sandbox's first process,
// which would escape them; with its PID namespace that process is a
// grandchild whose PID Go would have to find first. Instead the launcher
// (sova.py, the first and only program bubblewrap runs inside, PID 1 with
// --as-pid-1) sets every limit on itself before it forks the interpreter
// that runs the code — a prlimit-style wrapper with no race: every process
// in the sandbox is under the limits, and everything the code starts
// inherits them. RLIMIT_NPROC counts per user: the sandbox's user
// namespace gives the cell a count of its own, and Sova as root runs the
// sandbox as Config.UID because root's processes are exempt from it.
func (s *Sandbox) bwrapArgs(extra []string) []string {
	a := []string{
		// Every namespace: user, PID, network (nothing but a loopback of
		// its own), mount, IPC, UTS, cgroup.
		"--unshare-all", "--unshare-user",
		"--die-with-parent", // killed with bubblewrap, killed with Sova
		"--new-session",     // no terminal to push input into (TIOCSTI)
		// The launcher is PID 1, under the limits like the code: no
		// bubblewrap init without limits for the code to take over
		// (ptrace) and fork or allocate through.
		"--as-pid-1",
		"--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr",
	}
	if s.disableUserns {
		// No nested user namespace, so no capabilities inside either.
		a = append(a, "--disable-userns")
	}
	for _, p := range rootLinks {
		if target, err := os.Readlink(p); err == nil {
			a = append(a, "--symlink", target, p)
		} else {
			a = append(a, "--ro-bind-try", p, p)
		}
	}
	for _, p := range etcPaths {
		a = append(a, "--ro-bind-try", p, p)
	}
	a = append(a,
		"--proc", "/proc", // of the sandbox's own PID namespace
		"--dev", "/dev", "--remount-ro", "/dev", // null, zero, random…; no /dev/shm to fill
		"--size", strconv.FormatInt(s.cfg.WorkBytes, 10), "--tmpfs", workDir,
	)
	a = append(a, extra...)
	a = append(a,
		"--remount-ro", "/",
		"--chdir", workDir,
		"--clearenv",
		"--setenv", "HOME", workDir,
		"--setenv", "TMPDIR", workDir+"/.tmp",
		"--setenv", "PATH", "/usr/bin:/bin",
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "MPLBACKEND", "Agg",
		"--setenv", "MPLCONFIGDIR", workDir+"/.config/matplotlib",
		// One thread for BLAS: threads count as processes, and cells are
		// small.
		"--setenv", "OPENBLAS_NUM_THREADS", "1",
		"--setenv", "OMP_NUM_THREADS", "1",
		"--setenv", "MKL_NUM_THREADS", "1",
		// glibc reserves 64 MB of address space per malloc arena, up to 8
		// per core; under RLIMIT_AS that is memory the code cannot use.
		"--setenv", "MALLOC_ARENA_MAX", "2",
	)
	return a
}
