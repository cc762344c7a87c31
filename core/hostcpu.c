/* Can this machine run a target's programs, and how: the .md says how they
 * run (`param runs_on`: native, qemu or simulator), what a native run needs
 * (`param cpu_arch`, the machine name uname gives, and `param cpu_flags`,
 * the CPU features /proc/cpuinfo must list) and what an emulated one needs
 * (`param emulator`, a program on PATH).  GDCC_CPU_FLAGS, when set, stands
 * for the CPU's flags (tests use it to play a machine without some). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "hostcpu.h"
#include "util.h"

static const char *param_str(const Target *t, const char *name)
{
	const ParamInfo *p = target_param(t, name);
	return p && p->str ? p->str : NULL;
}

const char *target_runs_on(const Target *t)
{
	const char *r = param_str(t, "runs_on");
	return r ? r : "native";
}

/* The CPU's flags (space-separated), or NULL when they cannot be read. */
static char *cpu_flags(void)
{
	const char *env = getenv("GDCC_CPU_FLAGS");
	if (env)
		return xstrdup(env);
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return NULL;
	char *line = NULL, *flags = NULL;
	size_t cap = 0;
	while (!flags && getline(&line, &cap, f) > 0)
		if (strncmp(line, "flags", 5) == 0 && strchr(line, ':'))
			flags = xstrdup(strchr(line, ':') + 1);
	free(line);
	fclose(f);
	return flags;
}

static bool has_word(const char *list, const char *w, size_t n)
{
	for (const char *p = list; *p;) {
		p += strspn(p, " \t\n");
		size_t k = strcspn(p, " \t\n");
		if (k == n && strncmp(p, w, n) == 0)
			return true;
		p += k;
	}
	return false;
}

static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path || strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (const char *p = path; *p;) {
		size_t k = strcspn(p, ":");
		char *full = xasprintf("%.*s/%s", (int)k, p, prog);
		bool ok = access(full, X_OK) == 0;
		free(full);
		if (ok)
			return true;
		p += k;
		if (*p == ':')
			p++;
	}
	return false;
}

bool target_runs_here(const Target *t, char *why, size_t n)
{
	const char *how = target_runs_on(t);
	if (strcmp(how, "simulator") == 0)
		return true;
	if (strcmp(how, "qemu") == 0) {
		const char *emu = param_str(t, "emulator");
		if (emu && !on_path(emu)) {
			snprintf(why, n, "its emulator %s is not on PATH", emu);
			return false;
		}
		return true;
	}
	const char *arch = param_str(t, "cpu_arch");
	struct utsname u;
	if (arch && (uname(&u) != 0 || strcmp(u.machine, arch) != 0)) {
		snprintf(why, n, "it needs a %s CPU", arch);
		return false;
	}
	const char *need = param_str(t, "cpu_flags");
	if (!need)
		return true;
	char *have = cpu_flags();
	if (!have) {
		snprintf(why, n, "cannot read the CPU's flags (/proc/cpuinfo) to check for %s", need);
		return false;
	}
	bool ok = true;
	for (const char *p = need; *p && ok;) {
		p += strspn(p, " ");
		size_t k = strcspn(p, " ");
		if (k && !has_word(have, p, k)) {
			ok = false;
			snprintf(why, n, "this CPU lacks %.*s (the flags %s lists)", (int)k, p,
				 getenv("GDCC_CPU_FLAGS") ? "GDCC_CPU_FLAGS" : "/proc/cpuinfo");
		}
		p += k;
	}
	free(have);
	return ok;
}

const Target *target_native(void)
{
	const Target *best = NULL;
	char why[200];
	for (int i = 0; i < gdcc_ntargets; i++) {
		const Target *t = gdcc_targets[i];
		if (strcmp(target_runs_on(t), "native") != 0 || !target_runs_here(t, why, sizeof why))
			continue;
		if (!best || t->vector_bits > best->vector_bits)
			best = t;
	}
	return best;
}
