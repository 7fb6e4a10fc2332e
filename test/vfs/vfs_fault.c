/*
 * vfs_fault.c -- the fault-injecting vfs of vfs_fault.h.
 *
 * Model: a "node" is one file (an inode).  The name tables map paths to
 * nodes: `names` is the live namespace (what the real directory holds),
 * `dnames` the durable one (as of the last sync_dir of each directory).
 * A node has a durable image (loaded lazily: a node without an image has
 * no pending change, so its real contents are its durable contents) and a
 * list of pending changes since its last successful fsync.  A crash writes
 * the durable images back under the durable names and removes every name
 * that is not durable.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "vfs_fault.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/random.h"

enum
{
	OP_WRITE, OP_TRUNC, OP_ALLOC
};

typedef struct pending_op
{
	int			kind;
	uint64_t	off;
	uint64_t	len;
	uint8_t    *data;			/* OP_WRITE */
} pending_op;

typedef struct node
{
	struct node *next_all;
	bool		loaded;			/* img is valid */
	bool		lost;			/* contents hold writes that will never be durable */
	bool		mark;
	uint8_t    *img;
	uint64_t	img_size;
	uint64_t	img_cap;
	pending_op *ops;
	uint32_t	nops;
	uint32_t	capops;
} node;

typedef struct name_ent
{
	char	   *path;
	node	   *n;
} name_ent;

typedef struct name_tab
{
	name_ent   *e;
	uint32_t	n;
	uint32_t	cap;
} name_tab;

typedef struct fd_ent
{
	bool		used;
	bool		dead;
	node	   *n;
	char	   *path;
} fd_ent;

struct tides_vfs_fault
{
	tides_vfs	vfs;
	tides_vfs  *base;
	tides_rand	rnd;
	name_tab	names;
	name_tab	dnames;
	fd_ent	   *fds;
	int			nfds;
	node	   *all;
	tides_fault_rule rules[TIDES_FAULT_MAX_RULES];
	char	   *patterns[TIDES_FAULT_MAX_RULES];
	uint64_t	seen[TIDES_FAULT_MAX_RULES];
	uint64_t	failed[TIDES_FAULT_MAX_RULES];
	uint64_t	injected;
	uint64_t	mutations;
	uint64_t	freeze_at;
	bool		frozen;
};

#define FX(v) ((tides_vfs_fault *) (v)->ctx)

/* ---------------------------------------------------------------- helpers */

static void *
xrealloc(void *p, size_t n)
{
	void	   *q = realloc(p, n ? n : 1);

	if (q == NULL)
		abort();				/* a test helper: running out of memory is fatal */
	return q;
}

static char *
xstrdup(const char *s)
{
	char	   *d = strdup(s);

	if (d == NULL)
		abort();
	return d;
}

static node *
node_new(tides_vfs_fault *f, bool empty)
{
	node	   *n = calloc(1, sizeof(*n));

	if (n == NULL)
		abort();
	n->loaded = empty;			/* a brand-new file: durable image is empty */
	n->next_all = f->all;
	f->all = n;
	return n;
}

static void
node_clear_ops(node *n)
{
	for (uint32_t i = 0; i < n->nops; i++)
		free(n->ops[i].data);
	n->nops = 0;
}

static void
node_free(node *n)
{
	node_clear_ops(n);
	free(n->ops);
	free(n->img);
	free(n);
}

static void
img_resize(node *n, uint64_t size)
{
	if (size > n->img_cap)
	{
		uint64_t	cap = n->img_cap ? n->img_cap : 4096;

		while (cap < size)
			cap *= 2;
		n->img = xrealloc(n->img, cap);
		n->img_cap = cap;
	}
	if (size > n->img_size)
		memset(n->img + n->img_size, 0, size - n->img_size);
	n->img_size = size;
}

/* make the change of op durable in the image (len may be cut: a torn write) */
static void
img_apply(node *n, const pending_op *op, uint64_t len)
{
	switch (op->kind)
	{
		case OP_WRITE:
			if (op->off + len > n->img_size)
				img_resize(n, op->off + len);
			memcpy(n->img + op->off, op->data, len);
			break;
		case OP_TRUNC:
			img_resize(n, op->off);
			break;
		case OP_ALLOC:
			if (op->off + op->len > n->img_size)
				img_resize(n, op->off + op->len);
			break;
	}
}

/* read a file's current contents as its durable image */
static int
node_load_fd(tides_vfs_fault *f, node *n, int fd)
{
	int64_t		size,
				r;

	if (n->loaded)
		return 0;
	size = f->base->file_size(f->base, fd);
	if (size < 0)
		return (int) size;
	img_resize(n, (uint64_t) size);
	r = size > 0 ? f->base->pread(f->base, fd, n->img, (size_t) size, 0) : 0;
	if (r < 0)
		return (int) r;
	if (r < size)
		memset(n->img + r, 0, (size_t) (size - r));
	n->loaded = true;
	return 0;
}

static int
node_load_path(tides_vfs_fault *f, node *n, const char *path)
{
	int			fd,
				r;

	if (n->loaded)
		return 0;
	fd = f->base->open(f->base, path, O_RDONLY, 0);
	if (fd < 0)
		return fd;
	r = node_load_fd(f, n, fd);
	f->base->close(f->base, fd);
	return r;
}

static void
node_add_op(node *n, int kind, uint64_t off, uint64_t len, const void *data)
{
	pending_op *op;

	if (n->nops == n->capops)
	{
		n->capops = n->capops ? n->capops * 2 : 16;
		n->ops = xrealloc(n->ops, n->capops * sizeof(*n->ops));
	}
	op = &n->ops[n->nops++];
	op->kind = kind;
	op->off = off;
	op->len = len;
	op->data = NULL;
	if (kind == OP_WRITE)
	{
		op->data = xrealloc(NULL, len);
		memcpy(op->data, data, len);
	}
}

static bool
node_dirty(const node *n)
{
	return n->nops > 0 || n->lost;
}

/* ---- name tables */

static int
tab_find(const name_tab *t, const char *path)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (strcmp(t->e[i].path, path) == 0)
			return (int) i;
	return -1;
}

static node *
tab_get(const name_tab *t, const char *path)
{
	int			i = tab_find(t, path);

	return i < 0 ? NULL : t->e[i].n;
}

static void
tab_set(name_tab *t, const char *path, node *n)
{
	int			i = tab_find(t, path);

	if (i >= 0)
	{
		t->e[i].n = n;
		return;
	}
	if (t->n == t->cap)
	{
		t->cap = t->cap ? t->cap * 2 : 64;
		t->e = xrealloc(t->e, t->cap * sizeof(*t->e));
	}
	t->e[t->n].path = xstrdup(path);
	t->e[t->n].n = n;
	t->n++;
}

static void
tab_del(name_tab *t, const char *path)
{
	int			i = tab_find(t, path);

	if (i < 0)
		return;
	free(t->e[i].path);
	t->e[i] = t->e[--t->n];
}

static bool
tab_has_node(const name_tab *t, const node *n)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->e[i].n == n)
			return true;
	return false;
}

static void
tab_free(name_tab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->e[i].path);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

/* is path directly inside dir? */
static bool
in_dir(const char *path, const char *dir)
{
	size_t		dl = strlen(dir);

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	return strncmp(path, dir, dl) == 0 && path[dl] == '/' && strchr(path + dl + 1, '/') == NULL;
}

static bool
exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* the node of an existing path, adopting an untracked file as durable */
static node *
adopt(tides_vfs_fault *f, const char *path)
{
	node	   *n = tab_get(&f->names, path);

	if (n != NULL)
		return n;
	if (!exists(path))
		return NULL;
	n = node_new(f, false);
	tab_set(&f->names, path, n);
	tab_set(&f->dnames, path, n);
	return n;
}

static void
gc(tides_vfs_fault *f)
{
	node	  **pp;

	for (node *n = f->all; n != NULL; n = n->next_all)
		n->mark = false;
	for (uint32_t i = 0; i < f->names.n; i++)
		f->names.e[i].n->mark = true;
	for (uint32_t i = 0; i < f->dnames.n; i++)
		f->dnames.e[i].n->mark = true;
	for (int i = 0; i < f->nfds; i++)
		if (f->fds[i].used && f->fds[i].n != NULL)
			f->fds[i].n->mark = true;
	pp = &f->all;
	while (*pp != NULL)
	{
		node	   *n = *pp;

		if (!n->mark)
		{
			*pp = n->next_all;
			node_free(n);
		}
		else
			pp = &n->next_all;
	}
}

/* ---- descriptors */

static fd_ent *
fdtab_get(tides_vfs_fault *f, int fd)
{
	if (fd < 0 || fd >= f->nfds || !f->fds[fd].used)
		return NULL;
	return &f->fds[fd];
}

static void
fdtab_set(tides_vfs_fault *f, int fd, node *n, const char *path)
{
	if (fd >= f->nfds)
	{
		int			nn = f->nfds ? f->nfds : 64;

		while (nn <= fd)
			nn *= 2;
		f->fds = xrealloc(f->fds, nn * sizeof(*f->fds));
		memset(f->fds + f->nfds, 0, (nn - f->nfds) * sizeof(*f->fds));
		f->nfds = nn;
	}
	f->fds[fd].used = true;
	f->fds[fd].dead = false;
	f->fds[fd].n = n;
	f->fds[fd].path = xstrdup(path);
}

static void
fdtab_clear(tides_vfs_fault *f, int fd)
{
	fd_ent	   *e = fdtab_get(f, fd);

	if (e == NULL)
		return;
	free(e->path);
	memset(e, 0, sizeof(*e));
}

/* ---- faults */

/*
 * Account one call of kind `op` on path.  Returns 0 to let it proceed, or
 * the negative errno to fail it with; *rule_out is the rule that fired
 * (-1 for a freeze).
 */
static int
check_fault(tides_vfs_fault *f, int op, const char *path, bool mutating, int *rule_out)
{
	*rule_out = -1;
	if (mutating)
	{
		if (f->frozen || f->mutations >= f->freeze_at)
		{
			f->frozen = true;
			f->injected++;
			return -EIO;
		}
		f->mutations++;
	}
	for (int i = 0; i < TIDES_FAULT_MAX_RULES; i++)
	{
		tides_fault_rule *r = &f->rules[i];

		if (!(r->ops & op))
			continue;
		if (f->patterns[i] != NULL && (path == NULL || strstr(path, f->patterns[i]) == NULL))
			continue;
		if (f->seen[i]++ < r->skip)
			continue;
		if (r->count != 0 && f->failed[i] >= r->count)
			continue;
		f->failed[i]++;
		f->injected++;
		*rule_out = i;
		return -(r->err ? r->err : EIO);
	}
	return 0;
}

/* --------------------------------------------------------------- the vfs */

static int
fx_open(tides_vfs *v, const char *path, int flags, int mode)
{
	tides_vfs_fault *f = FX(v);
	bool		there = exists(path);
	bool		creating = !there && (flags & O_CREAT);
	bool		truncating = there && (flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY;
	node	   *n = NULL;
	int			rule,
				r,
				fd;

	r = check_fault(f, TIDES_FAULT_OPEN | (creating ? TIDES_FAULT_CREATE : 0) |
					(truncating ? TIDES_FAULT_TRUNCATE : 0), path,
					creating || truncating, &rule);
	if (r != 0)
		return r;
	if (there)
	{
		n = adopt(f, path);
		if (truncating && (r = node_load_path(f, n, path)) != 0)
			return r;
	}
	fd = f->base->open(f->base, path, flags, mode);
	if (fd < 0)
		return fd;
	if (creating)
	{
		n = node_new(f, true);
		tab_set(&f->names, path, n);
	}
	else if (n == NULL)
		n = adopt(f, path);		/* appeared meanwhile */
	if (truncating && n != NULL)
		node_add_op(n, OP_TRUNC, 0, 0, NULL);
	fdtab_set(f, fd, n, path);
	return fd;
}

static int
fx_close(tides_vfs *v, int fd)
{
	tides_vfs_fault *f = FX(v);

	fdtab_clear(f, fd);
	return f->base->close(f->base, fd);
}

static int64_t
fx_pread(tides_vfs *v, int fd, void *buf, size_t n, uint64_t off)
{
	tides_vfs_fault *f = FX(v);
	fd_ent	   *e = fdtab_get(f, fd);
	int			rule,
				r;

	if (e != NULL && e->dead)
		return -EIO;
	r = check_fault(f, TIDES_FAULT_READ, e ? e->path : NULL, false, &rule);
	if (r != 0)
		return r;
	return f->base->pread(f->base, fd, buf, n, off);
}

static int64_t
fx_pwrite(tides_vfs *v, int fd, const void *buf, size_t n, uint64_t off)
{
	tides_vfs_fault *f = FX(v);
	fd_ent	   *e = fdtab_get(f, fd);
	int			rule,
				r;
	int64_t		w;

	if (e == NULL)
		return f->base->pwrite(f->base, fd, buf, n, off);
	if (e->dead)
		return -EIO;
	r = check_fault(f, TIDES_FAULT_WRITE, e->path, true, &rule);
	if (r == 0 || (rule >= 0 && f->rules[rule].torn && n > 1))
	{
		size_t		len = n;
		int			lr;

		if (r != 0)
			len = (size_t) tides_rand_uniform(&f->rnd, n);	/* a torn prefix */
		if ((lr = node_load_fd(f, e->n, fd)) != 0)
			return lr;
		w = len > 0 ? f->base->pwrite(f->base, fd, buf, len, off) : 0;
		if (w < 0)
			return w;
		if (w > 0)
			node_add_op(e->n, OP_WRITE, off, (uint64_t) w, buf);
		if (r == 0)
			return w;
	}
	return r;
}

static int
fx_fsync(tides_vfs *v, int fd)
{
	tides_vfs_fault *f = FX(v);
	fd_ent	   *e = fdtab_get(f, fd);
	int			rule,
				r;

	if (e == NULL)
		return f->base->fsync(f->base, fd);
	if (e->dead)
		return -EIO;
	r = check_fault(f, TIDES_FAULT_SYNC, e->path, true, &rule);
	if (r != 0)
	{
		if (rule >= 0 && f->rules[rule].sync_loses && e->n->nops > 0)
		{
			/* the kernel dropped the dirty pages: never durable now */
			node_clear_ops(e->n);
			e->n->lost = true;
		}
		return r;
	}
	r = f->base->fsync(f->base, fd);
	if (r != 0)
		return r;
	for (uint32_t i = 0; i < e->n->nops; i++)
		img_apply(e->n, &e->n->ops[i], e->n->ops[i].len);
	node_clear_ops(e->n);
	return 0;
}

static int
fx_allocate(tides_vfs *v, int fd, uint64_t off, uint64_t len)
{
	tides_vfs_fault *f = FX(v);
	fd_ent	   *e = fdtab_get(f, fd);
	int			rule,
				r;

	if (e == NULL)
		return f->base->allocate(f->base, fd, off, len);
	if (e->dead)
		return -EIO;
	r = check_fault(f, TIDES_FAULT_ALLOCATE, e->path, true, &rule);
	if (r != 0)
		return r;
	if ((r = node_load_fd(f, e->n, fd)) != 0)
		return r;
	r = f->base->allocate(f->base, fd, off, len);
	if (r == 0)
		node_add_op(e->n, OP_ALLOC, off, len, NULL);
	return r;
}

static int
fx_truncate(tides_vfs *v, int fd, uint64_t len)
{
	tides_vfs_fault *f = FX(v);
	fd_ent	   *e = fdtab_get(f, fd);
	int			rule,
				r;

	if (e == NULL)
		return f->base->truncate(f->base, fd, len);
	if (e->dead)
		return -EIO;
	r = check_fault(f, TIDES_FAULT_TRUNCATE, e->path, true, &rule);
	if (r != 0)
		return r;
	if ((r = node_load_fd(f, e->n, fd)) != 0)
		return r;
	r = f->base->truncate(f->base, fd, len);
	if (r == 0)
		node_add_op(e->n, OP_TRUNC, len, 0, NULL);
	return r;
}

static int64_t
fx_file_size(tides_vfs *v, int fd)
{
	tides_vfs_fault *f = FX(v);
	fd_ent	   *e = fdtab_get(f, fd);

	if (e != NULL && e->dead)
		return -EIO;
	return f->base->file_size(f->base, fd);
}

static int
fx_unlink(tides_vfs *v, const char *path)
{
	tides_vfs_fault *f = FX(v);
	node	   *n;
	int			rule,
				r;

	r = check_fault(f, TIDES_FAULT_UNLINK, path, true, &rule);
	if (r != 0)
		return r;
	n = adopt(f, path);
	/* a durable name can come back after a crash: keep its contents */
	if (n != NULL && tab_has_node(&f->dnames, n) && (r = node_load_path(f, n, path)) != 0)
		return r;
	r = f->base->unlink(f->base, path);
	if (r == 0)
		tab_del(&f->names, path);
	return r;
}

static int
fx_rename(tides_vfs *v, const char *from, const char *to)
{
	tides_vfs_fault *f = FX(v);
	node	   *nf,
			   *nt;
	int			rule,
				r;

	r = check_fault(f, TIDES_FAULT_RENAME, from, true, &rule);
	if (r != 0)
		return r;
	nf = adopt(f, from);
	nt = adopt(f, to);
	if (nf != NULL && tab_has_node(&f->dnames, nf) && (r = node_load_path(f, nf, from)) != 0)
		return r;
	if (nt != NULL && nt != nf && tab_has_node(&f->dnames, nt) && (r = node_load_path(f, nt, to)) != 0)
		return r;
	r = f->base->rename(f->base, from, to);
	if (r == 0 && nf != NULL)
	{
		tab_del(&f->names, from);
		tab_set(&f->names, to, nf);
	}
	return r;
}

static int
fx_mkdir(tides_vfs *v, const char *path)
{
	tides_vfs_fault *f = FX(v);

	return f->base->mkdir(f->base, path);
}

static int
fx_sync_dir(tides_vfs *v, const char *path)
{
	tides_vfs_fault *f = FX(v);
	int			rule,
				r;

	r = check_fault(f, TIDES_FAULT_SYNC_DIR, path, true, &rule);
	if (r != 0)
		return r;
	r = f->base->sync_dir(f->base, path);
	if (r != 0)
		return r;
	for (uint32_t i = 0; i < f->dnames.n;)
	{
		if (in_dir(f->dnames.e[i].path, path))
		{
			free(f->dnames.e[i].path);
			f->dnames.e[i] = f->dnames.e[--f->dnames.n];
		}
		else
			i++;
	}
	for (uint32_t i = 0; i < f->names.n; i++)
		if (in_dir(f->names.e[i].path, path))
			tab_set(&f->dnames, f->names.e[i].path, f->names.e[i].n);
	gc(f);
	return 0;
}

static int
fx_list_dir(tides_vfs *v, const char *path, void (*fn) (const char *, void *), void *arg)
{
	tides_vfs_fault *f = FX(v);

	return f->base->list_dir(f->base, path, fn, arg);
}

/* ------------------------------------------------------------------ API */

tides_vfs_fault *
tides_vfs_fault_new(tides_vfs *base, uint64_t seed)
{
	tides_vfs_fault *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->base = base ? base : tides_vfs_posix();
	tides_rand_seed(&f->rnd, seed);
	f->freeze_at = UINT64_MAX;
	f->vfs.ctx = f;
	f->vfs.open = fx_open;
	f->vfs.close = fx_close;
	f->vfs.pread = fx_pread;
	f->vfs.pwrite = fx_pwrite;
	f->vfs.fsync = fx_fsync;
	f->vfs.allocate = fx_allocate;
	f->vfs.truncate = fx_truncate;
	f->vfs.file_size = fx_file_size;
	f->vfs.unlink = fx_unlink;
	f->vfs.rename = fx_rename;
	f->vfs.mkdir = fx_mkdir;
	f->vfs.sync_dir = fx_sync_dir;
	f->vfs.list_dir = fx_list_dir;
	return f;
}

void
tides_vfs_fault_free(tides_vfs_fault *f)
{
	if (f == NULL)
		return;
	tides_vfs_fault_clear_rules(f);
	for (int i = 0; i < f->nfds; i++)
		free(f->fds[i].path);
	free(f->fds);
	tab_free(&f->names);
	tab_free(&f->dnames);
	while (f->all != NULL)
	{
		node	   *n = f->all;

		f->all = n->next_all;
		node_free(n);
	}
	free(f);
}

tides_vfs *
tides_vfs_fault_vfs(tides_vfs_fault *f)
{
	return &f->vfs;
}

int
tides_vfs_fault_add_rule(tides_vfs_fault *f, const tides_fault_rule *r)
{
	for (int i = 0; i < TIDES_FAULT_MAX_RULES; i++)
		if (f->rules[i].ops == 0)
		{
			f->rules[i] = *r;
			f->patterns[i] = r->pattern ? xstrdup(r->pattern) : NULL;
			f->rules[i].pattern = f->patterns[i];
			f->seen[i] = 0;
			f->failed[i] = 0;
			return i;
		}
	return -1;
}

void
tides_vfs_fault_clear_rules(tides_vfs_fault *f)
{
	for (int i = 0; i < TIDES_FAULT_MAX_RULES; i++)
	{
		free(f->patterns[i]);
		f->patterns[i] = NULL;
		memset(&f->rules[i], 0, sizeof(f->rules[i]));
	}
}

uint64_t
tides_vfs_fault_injected(const tides_vfs_fault *f)
{
	return f->injected;
}

uint64_t
tides_vfs_fault_mutations(const tides_vfs_fault *f)
{
	return f->mutations;
}

void
tides_vfs_fault_freeze_after(tides_vfs_fault *f, uint64_t n)
{
	f->freeze_at = n == UINT64_MAX ? UINT64_MAX : f->mutations + n;
	if (n == UINT64_MAX)
		f->frozen = false;
}

bool
tides_vfs_fault_frozen(const tides_vfs_fault *f)
{
	return f->frozen;
}

uint64_t
tides_vfs_fault_unsynced_bytes(const tides_vfs_fault *f)
{
	uint64_t	sum = 0;

	for (node *n = f->all; n != NULL; n = n->next_all)
		for (uint32_t i = 0; i < n->nops; i++)
			if (n->ops[i].kind == OP_WRITE)
				sum += n->ops[i].len;
	return sum;
}

/* write a node's durable image to path (creating the file) */
static int
write_image(tides_vfs_fault *f, node *n, const char *path)
{
	tides_vfs  *b = f->base;
	int			fd = b->open(b, path, O_RDWR | O_CREAT, 0600);
	int			r;
	int64_t		w = 0;

	if (fd < 0)
		return fd;
	r = b->truncate(b, fd, n->img_size);
	if (r == 0 && n->img_size > 0)
		w = b->pwrite(b, fd, n->img, n->img_size, 0);
	if (r == 0 && w < 0)
		r = (int) w;
	b->close(b, fd);
	return r;
}

int
tides_vfs_fault_crash(tides_vfs_fault *f, unsigned keep_percent)
{
	int			result = 0;

	/* 1. some pending changes may have reached the disk anyway */
	for (node *n = f->all; n != NULL; n = n->next_all)
	{
		if (keep_percent > 0 && n->loaded)
			for (uint32_t i = 0; i < n->nops; i++)
			{
				const pending_op *op = &n->ops[i];
				uint64_t	len = op->len;

				if (tides_rand_uniform(&f->rnd, 100) >= keep_percent)
					continue;
				if (op->kind == OP_WRITE && len > 1 && tides_rand_uniform(&f->rnd, 8) == 0)
					len = tides_rand_uniform(&f->rnd, len);	/* torn at the crash */
				img_apply(n, op, len);
			}
	}

	/* 2. every open descriptor dies with the machine */
	for (int i = 0; i < f->nfds; i++)
		if (f->fds[i].used)
			f->fds[i].dead = true;

	/* 3. names that are not durable go away */
	for (uint32_t i = 0; i < f->names.n; i++)
	{
		name_ent   *e = &f->names.e[i];

		if (tab_get(&f->dnames, e->path) != e->n)
		{
			int			r = f->base->unlink(f->base, e->path);

			if (r != 0 && r != -ENOENT && result == 0)
				result = r;
		}
	}

	/* 4. durable names get their durable contents */
	for (uint32_t i = 0; i < f->dnames.n; i++)
	{
		name_ent   *e = &f->dnames.e[i];
		node	   *live = tab_get(&f->names, e->path);
		int			r = 0;

		if (live != e->n || node_dirty(e->n))
		{
			if (!e->n->loaded)
				r = -EIO;		/* cannot happen: images load before changes */
			else
				r = write_image(f, e->n, e->path);
		}
		if (r != 0 && result == 0)
			result = r;
	}

	/* 5. the live state is now the durable state */
	tab_free(&f->names);
	for (uint32_t i = 0; i < f->dnames.n; i++)
		tab_set(&f->names, f->dnames.e[i].path, f->dnames.e[i].n);
	for (node *n = f->all; n != NULL; n = n->next_all)
	{
		node_clear_ops(n);
		n->lost = false;
	}
	for (int i = 0; i < f->nfds; i++)
		if (f->fds[i].used)
			f->fds[i].n = NULL;
	f->frozen = false;
	f->freeze_at = UINT64_MAX;
	gc(f);
	return result;
}
