/*
 * test_portability.c -- the engine spells architecture-specific code in one
 * place only.
 *
 * The engine runs on x86-64 and ARMv8 (cache/README.md).  Spin loops use
 * tides_cpu_relax() (util/lock.h: "pause" on x86, "yield" on ARMv8, a
 * compiler barrier elsewhere); an x86 builtin anywhere else breaks the build
 * on every other architecture, which a build on this machine cannot notice.
 * So this test reads the engine's sources (make engine-check runs in the
 * repository root) and fails on any architecture-specific construct outside
 * the two files allowed one, naming file and line: util/lock.h and
 * util/crc32c.c (three CRC streams with SSE4.2 on x86-64, PostgreSQL's
 * routine everywhere else: the test checks that the fallback is there).
 * It also runs tides_cpu_relax().
 */
#include "testlib.h"
#include "util/lock.h"

#include <dirent.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

static const char *const forbidden[] = {
	"__builtin_ia32_", "_mm_pause", "__asm", "asm(", "asm volatile", "__x86_64__",
	"__i386__", "__aarch64__", "__arm__", "immintrin.h", "x86intrin.h", "arm_acle.h",
};

static int	files_read;

static void
scan_file(const char *path)
{
	FILE	   *f = fopen(path, "r");
	char		line[4096];
	int			no = 0;

	if (f == NULL)
		return;
	files_read++;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		no++;
		for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++)
			if (strstr(line, forbidden[i]) != NULL)
			{
				test_failures++;
				fprintf(stderr, "test_portability: %s:%d: \"%s\" outside util/lock.h and util/crc32c.c "
						"(use tides_cpu_relax)\n", path, no, forbidden[i]);
			}
	}
	fclose(f);
}

static void
scan_dir(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		char		path[1024];
		size_t		n = strlen(e->d_name);
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode))
			scan_dir(path);
		else if (n > 2 && (strcmp(e->d_name + n - 2, ".c") == 0 || strcmp(e->d_name + n - 2, ".h") == 0) &&
				 strcmp(path, "src/engine/util/lock.h") != 0 && strcmp(path, "src/engine/util/crc32c.c") != 0)
			scan_file(path);
	}
	closedir(d);
}

/* util/crc32c.c keeps a portable definition beside its x86-64 one */
static void
check_crc_fallback(void)
{
	FILE	   *f = fopen("src/engine/util/crc32c.c", "r");
	char		line[1024];
	bool		guard = false,
				fallback = false;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		guard |= strstr(line, "#if defined(__x86_64__)") != NULL;
		fallback |= strstr(line, "#else") != NULL && strstr(line, "!TIDES_CRC_3WAY") != NULL;
	}
	fclose(f);
	CHECK(guard && fallback);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	for (int i = 0; i < 1000; i++)
		tides_cpu_relax();
	scan_dir("src/engine");
	check_crc_fallback();
	if (files_read < 20)
	{
		test_failures++;
		fprintf(stderr, "test_portability: read only %d engine sources: run from the repository root\n",
				files_read);
	}
	return test_finish("test_portability");
}
