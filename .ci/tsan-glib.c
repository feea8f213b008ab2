/*
 * tsan-glib.c - linked into the ThreadSanitizer build only (see .ci/tsan).
 * Shows TSan the locks GLib takes where TSan cannot see them; it silences
 * nothing.
 *
 * Debian 12's GLib (2.74) implements GMutex and GCond on Linux with raw
 * futex system calls, not pthread, so TSan, which learns about locks by
 * intercepting pthread, never sees them taken, and every access two scan
 * threads make under such a lock looks like a race. GLib itself switches
 * to pthread mutexes when it is built with -fsanitize=thread (2.76 and
 * later); Debian's is not. Two places matter to a scan:
 *
 * - GMime guards its charset-name cache with a GMutex (G_LOCK in
 *   gmime-charset.c), locked through the PLT: the wrappers below report
 *   each lock and unlock with TSan's mutex annotations, so TSan also checks
 *   these mutexes for lock-order inversions.
 * - GMime turns every Date: header into a GDateTime, and GLib keeps time
 *   zones in a cache under an internal G_LOCK that is bound inside
 *   libglib (-Bsymbolic-functions), out of reach of any wrapper. The
 *   entry points GMime calls into that cache are wrapped instead, each call
 *   under one pthread mutex that TSan does see: what GLib already
 *   serialises stays serialised, now visibly.
 *
 * A race on any other data, ours or a library's, is still reported.
 * Built without -fsanitize=thread (its own accesses are not the subject);
 * the __tsan_* entry points come from libtsan, linked by the executable.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glib.h>
#include <pthread.h>
#include <sanitizer/tsan_interface.h>
#include <stdlib.h>

typedef void (*mutex_fn)(GMutex *m);
typedef gboolean (*trylock_fn)(GMutex *m);
typedef void (*wait_fn)(GCond *c, GMutex *m);
typedef gboolean (*wait_until_fn)(GCond *c, GMutex *m, gint64 end_time);

/* Resolved on first use: GLib's own constructors may lock before ours
 * would run. A second thread resolving at the same time stores the same
 * value. */
static void *
real(void **slot, const char *name)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

    if (fn == NULL) {
        fn = dlsym(RTLD_NEXT, name);
        if (fn == NULL)
            abort();
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

static void *lock_slot, *unlock_slot, *trylock_slot, *clear_slot, *wait_slot, *until_slot;

void
g_mutex_lock(GMutex *m)
{
    mutex_fn fn = (mutex_fn)real(&lock_slot, "g_mutex_lock");

    __tsan_mutex_pre_lock(m, 0);
    fn(m);
    __tsan_mutex_post_lock(m, 0, 0);
}

void
g_mutex_unlock(GMutex *m)
{
    mutex_fn fn = (mutex_fn)real(&unlock_slot, "g_mutex_unlock");

    __tsan_mutex_pre_unlock(m, 0);
    fn(m);
    __tsan_mutex_post_unlock(m, 0);
}

gboolean
g_mutex_trylock(GMutex *m)
{
    trylock_fn fn = (trylock_fn)real(&trylock_slot, "g_mutex_trylock");
    gboolean ok;

    __tsan_mutex_pre_lock(m, __tsan_mutex_try_lock);
    ok = fn(m);
    __tsan_mutex_post_lock(m, __tsan_mutex_try_lock | (ok ? 0 : __tsan_mutex_try_lock_failed), 0);
    return ok;
}

void
g_mutex_clear(GMutex *m)
{
    mutex_fn fn = (mutex_fn)real(&clear_slot, "g_mutex_clear");

    __tsan_mutex_destroy(m, 0);
    fn(m);
}

/* A wait gives the mutex up and takes it back inside the futex call. */
void
g_cond_wait(GCond *c, GMutex *m)
{
    wait_fn fn = (wait_fn)real(&wait_slot, "g_cond_wait");

    __tsan_mutex_pre_unlock(m, 0);
    __tsan_mutex_post_unlock(m, 0);
    fn(c, m);
    __tsan_mutex_pre_lock(m, 0);
    __tsan_mutex_post_lock(m, 0, 0);
}

gboolean
g_cond_wait_until(GCond *c, GMutex *m, gint64 end_time)
{
    wait_until_fn fn = (wait_until_fn)real(&until_slot, "g_cond_wait_until");
    gboolean ok;

    __tsan_mutex_pre_unlock(m, 0);
    __tsan_mutex_post_unlock(m, 0);
    ok = fn(c, m, end_time);
    __tsan_mutex_pre_lock(m, 0);
    __tsan_mutex_post_lock(m, 0, 0);
    return ok;
}

typedef GTimeZone *(*tz_new_fn)(const gchar *identifier);
typedef GTimeZone *(*tz_utc_fn)(void);
typedef void (*tz_unref_fn)(GTimeZone *tz);
typedef GDateTime *(*dt_new_fn)(GTimeZone *tz, gint year, gint month, gint day, gint hour,
                                gint minute, gdouble seconds);
typedef GDateTime *(*dt_now_fn)(void);
typedef void (*dt_unref_fn)(GDateTime *dt);

static pthread_mutex_t tz_lock = PTHREAD_MUTEX_INITIALIZER;
static void *tz_new_slot, *tz_utc_slot, *tz_unref_slot, *dt_new_slot, *dt_now_slot, *dt_unref_slot;

GTimeZone *
g_time_zone_new_identifier(const gchar *identifier)
{
    tz_new_fn fn = (tz_new_fn)real(&tz_new_slot, "g_time_zone_new_identifier");
    GTimeZone *tz;

    pthread_mutex_lock(&tz_lock);
    tz = fn(identifier);
    pthread_mutex_unlock(&tz_lock);
    return tz;
}

GTimeZone *
g_time_zone_new_utc(void)
{
    tz_utc_fn fn = (tz_utc_fn)real(&tz_utc_slot, "g_time_zone_new_utc");
    GTimeZone *tz;

    pthread_mutex_lock(&tz_lock);
    tz = fn();
    pthread_mutex_unlock(&tz_lock);
    return tz;
}

void
g_time_zone_unref(GTimeZone *tz)
{
    tz_unref_fn fn = (tz_unref_fn)real(&tz_unref_slot, "g_time_zone_unref");

    pthread_mutex_lock(&tz_lock);
    fn(tz);
    pthread_mutex_unlock(&tz_lock);
}

GDateTime *
g_date_time_new(GTimeZone *tz, gint year, gint month, gint day, gint hour, gint minute,
                gdouble seconds)
{
    dt_new_fn fn = (dt_new_fn)real(&dt_new_slot, "g_date_time_new");
    GDateTime *dt;

    pthread_mutex_lock(&tz_lock);
    dt = fn(tz, year, month, day, hour, minute, seconds);
    pthread_mutex_unlock(&tz_lock);
    return dt;
}

GDateTime *
g_date_time_new_now_utc(void)
{
    dt_now_fn fn = (dt_now_fn)real(&dt_now_slot, "g_date_time_new_now_utc");
    GDateTime *dt;

    pthread_mutex_lock(&tz_lock);
    dt = fn();
    pthread_mutex_unlock(&tz_lock);
    return dt;
}

/* The last reference to a date drops its time zone's, which may take the
 * zone out of the cache. */
void
g_date_time_unref(GDateTime *dt)
{
    dt_unref_fn fn = (dt_unref_fn)real(&dt_unref_slot, "g_date_time_unref");

    pthread_mutex_lock(&tz_lock);
    fn(dt);
    pthread_mutex_unlock(&tz_lock);
}
