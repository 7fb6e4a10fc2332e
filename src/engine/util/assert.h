/*
 * assert.h -- the engine's assertions.
 *
 * TIDES_ASSERT(cond) states an invariant the code relies on: a contract a
 * header or README states (lock held, state machine transition, key order,
 * reference count), checked where it matters.  It is for bugs in the
 * engine, never for bad input: corrupt files, failed I/O and exhausted
 * memory are errors the engine reports (util/status.h), and an assertion
 * must not fire on anything a file, a caller or the operating system can
 * do.
 *
 * Active only when the engine is compiled with -DTIDES_ASSERTS, which the
 * sanitizer build does (ENGINE_SAN in engine.mk: make engine-check,
 * engine-soak and the crash tests' unit test); the fuzz targets compile
 * with it too.  Elsewhere (libtides_engine.a, tidesam.so) the condition is
 * compiled out: it is not evaluated, so it must have no side effects, but
 * it is still type-checked (sizeof), so it cannot rot.
 *
 * On failure: "tides assertion failed: file:line: function: expression" on
 * stderr, then abort(), so a core dump or the sanitizer's stack trace shows
 * where.
 */
#ifndef TIDES_UTIL_ASSERT_H
#define TIDES_UTIL_ASSERT_H

#ifdef TIDES_ASSERTS

void		tides_assert_fail(const char *expr, const char *file, int line, const char *func)
			__attribute__((noreturn, cold));

#define TIDES_ASSERT(cond) \
	((cond) ? (void) 0 : tides_assert_fail(#cond, __FILE__, __LINE__, __func__))

#else

#define TIDES_ASSERT(cond) ((void) sizeof((cond) ? 1 : 0))

#endif

#endif
