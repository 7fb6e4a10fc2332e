/*
 * bank.c -- the bank-transfer workload of the crash tests (libpq, threads).
 *
 *   bank CONNINFO LOGDIR CLIENTS ACCOUNTS SECONDS ID_BASE SYNC_OFF_FROM SEED
 *
 * Each of CLIENTS threads opens its own connection and runs transfers until
 * SECONDS pass or its connection dies (the server was killed):
 *
 *   BEGIN;
 *   SELECT txid_current();                       -- recorded with the transfer
 *   UPDATE accounts SET balance = balance -/+ amt WHERE id = lower id;
 *   UPDATE accounts SET balance = balance +/- amt WHERE id = higher id;
 *   INSERT INTO history VALUES (tid, src, dst, amt);
 *   UPDATE tellers SET n = n + 1 WHERE id = client % 10;   -- a HOT update
 *   [sometimes: SAVEPOINT s; INSERT a row with -tid; ROLLBACK TO s]
 *   COMMIT;                                      -- [sometimes ROLLBACK]
 *
 * Updates go in account order, so transfers never deadlock.  Threads with
 * index >= SYNC_OFF_FROM run with synchronous_commit = off.  A transfer id
 * is ID_BASE + client * 10^7 + n.
 *
 * Every thread appends to LOGDIR/client.<i> with write(2) (nothing is lost
 * if the client is killed), one line per event:
 *   C tid xid   COMMIT is about to be sent (the transfer may now be durable)
 *   A tid       COMMIT returned success: acknowledged
 *   U tid       the connection died with COMMIT in flight: outcome unknown
 *   F tid       an error aborted the transfer (it must never be visible)
 *   R tid       the client rolled the transfer back (must never be visible)
 *   X tid msg   an invariant broke in the client's view (e.g. an UPDATE
 *               found no row): always a test failure
 * A transfer with no C line never had its COMMIT sent.
 * The first line of each file is "S sync" or "S async".
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libpq-fe.h"

static const char *conninfo;
static const char *logdir;
static int	n_accounts;
static double seconds;
static long long id_base;
static int	sync_off_from;
static unsigned seed0;

typedef struct client
{
	int			index;
	int			logfd;
	PGconn	   *conn;
	unsigned	rnd;
	long long	n;
	long long	acked;
	long long	failed;
} client;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned
rnd(client *c)
{
	c->rnd = c->rnd * 1103515245u + 12345u;
	return (c->rnd >> 8) & 0xffffff;
}

static void
logline(client *c, const char *fmt,...)
{
	char		buf[512];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int) sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(c->logfd, buf, n) != n)
		perror("write log");
}

/* run one statement; 0 ok, -1 error (transaction aborted), -2 connection lost */
static int
run(client *c, const char *sql, PGresult **out, const char *want_tuples)
{
	PGresult   *r = PQexec(c->conn, sql);
	ExecStatusType st = PQresultStatus(r);
	int			rc = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
	{
		rc = PQstatus(c->conn) == CONNECTION_BAD ? -2 : -1;
		if (rc == -1 && getenv("BANK_VERBOSE"))
			fprintf(stderr, "client %d: %s: %s", c->index, sql, PQerrorMessage(c->conn));
	}
	else if (want_tuples && strcmp(PQcmdTuples(r), want_tuples) != 0)
		rc = -3;
	if (out && rc == 0)
		*out = r;
	else
		PQclear(r);
	return rc;
}

static void *
client_main(void *arg)
{
	client	   *c = arg;
	double		end = now_s() + seconds;
	char		sql[512];

	c->conn = PQconnectdb(conninfo);
	if (PQstatus(c->conn) != CONNECTION_OK)
	{
		fprintf(stderr, "client %d: %s", c->index, PQerrorMessage(c->conn));
		PQfinish(c->conn);
		return NULL;
	}
	logline(c, "S %s", c->index >= sync_off_from ? "async" : "sync");
	if (c->index >= sync_off_from)
		PQclear(PQexec(c->conn, "SET synchronous_commit = off"));

	while (now_s() < end)
	{
		long long	tid = id_base + (long long) c->index * 10000000LL + c->n++;
		int			a = rnd(c) % n_accounts,
					b = rnd(c) % n_accounts;
		int			amt = 1 + rnd(c) % 100;
		int			lo,
					hi;
		long		dlo,
					dhi;
		PGresult   *r = NULL;
		int			rc;
		unsigned	dice = rnd(c) % 100;
		char		xid[32];

		if (a == b)
			b = (a + 1) % n_accounts;
		lo = a < b ? a : b;
		hi = a < b ? b : a;
		dlo = lo == a ? -amt : amt;
		dhi = -dlo;

		rc = run(c, "BEGIN", NULL, NULL);
		if (rc == 0)
			rc = run(c, "SELECT txid_current()", &r, NULL);
		if (rc == 0)
		{
			snprintf(xid, sizeof(xid), "%s", PQgetvalue(r, 0, 0));
			PQclear(r);
			snprintf(sql, sizeof(sql), "UPDATE accounts SET balance = balance + %ld WHERE id = %d", dlo, lo);
			rc = run(c, sql, NULL, "1");
		}
		if (rc == 0)
		{
			snprintf(sql, sizeof(sql), "UPDATE accounts SET balance = balance + %ld WHERE id = %d", dhi, hi);
			rc = run(c, sql, NULL, "1");
		}
		if (rc == 0)
		{
			snprintf(sql, sizeof(sql), "INSERT INTO history (tid, src, dst, amount) VALUES (%lld, %d, %d, %d)",
					 tid, a, b, amt);
			rc = run(c, sql, NULL, "1");
		}
		if (rc == 0)
		{
			/* a HOT update (n is not indexed) in the same transaction */
			snprintf(sql, sizeof(sql), "UPDATE tellers SET n = n + 1 WHERE id = %d", c->index % 10);
			rc = run(c, sql, NULL, "1");
		}
		if (rc == 0 && dice < 5)
		{
			/* a subtransaction whose row must vanish */
			rc = run(c, "SAVEPOINT s", NULL, NULL);
			if (rc == 0)
			{
				snprintf(sql, sizeof(sql), "INSERT INTO history (tid, src, dst, amount) VALUES (%lld, %d, %d, %d)",
						 -tid, a, b, 1000000);
				rc = run(c, sql, NULL, "1");
			}
			if (rc == 0)
				rc = run(c, "ROLLBACK TO SAVEPOINT s", NULL, NULL);
		}
		if (rc == -3)
		{
			logline(c, "X %lld an UPDATE or INSERT did not affect exactly one row", tid);
			PQclear(PQexec(c->conn, "ROLLBACK"));
			continue;
		}
		if (rc == -2)
		{
			logline(c, "F %lld", tid);	/* COMMIT never sent */
			break;
		}
		if (rc == -1)
		{
			logline(c, "F %lld", tid);
			PQclear(PQexec(c->conn, "ROLLBACK"));
			c->failed++;
			continue;
		}
		if (dice >= 5 && dice < 8)
		{
			logline(c, "R %lld", tid);
			if (run(c, "ROLLBACK", NULL, NULL) == -2)
				break;
			continue;
		}
		logline(c, "C %lld %s", tid, xid);
		r = PQexec(c->conn, "COMMIT");
		if (PQresultStatus(r) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(r), "COMMIT") == 0)
		{
			logline(c, "A %lld", tid);
			c->acked++;
		}
		else if (PQstatus(c->conn) == CONNECTION_BAD)
		{
			logline(c, "U %lld", tid);
			PQclear(r);
			break;
		}
		else
		{
			/* COMMIT answered with an error (or ROLLBACK): the transfer aborted */
			logline(c, "F %lld", tid);
			if (getenv("BANK_VERBOSE"))
				fprintf(stderr, "client %d: COMMIT: %s %s", c->index, PQcmdStatus(r), PQerrorMessage(c->conn));
			c->failed++;
		}
		PQclear(r);
	}
	PQfinish(c->conn);
	return NULL;
}

int
main(int argc, char **argv)
{
	int			nclients;
	client	   *cl;
	pthread_t  *th;
	long long	acked = 0,
				failed = 0;

	if (argc != 9)
	{
		fprintf(stderr, "usage: bank CONNINFO LOGDIR CLIENTS ACCOUNTS SECONDS ID_BASE SYNC_OFF_FROM SEED\n");
		return 2;
	}
	conninfo = argv[1];
	logdir = argv[2];
	nclients = atoi(argv[3]);
	n_accounts = atoi(argv[4]);
	seconds = atof(argv[5]);
	id_base = atoll(argv[6]);
	sync_off_from = atoi(argv[7]);
	seed0 = (unsigned) strtoul(argv[8], NULL, 10);

	cl = calloc(nclients, sizeof(client));
	th = calloc(nclients, sizeof(pthread_t));
	for (int i = 0; i < nclients; i++)
	{
		char		path[1024];

		cl[i].index = i;
		cl[i].rnd = seed0 * 7919u + (unsigned) i * 104729u + 1;
		snprintf(path, sizeof(path), "%s/client.%d", logdir, i);
		cl[i].logfd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (cl[i].logfd < 0)
		{
			perror(path);
			return 2;
		}
		pthread_create(&th[i], NULL, client_main, &cl[i]);
	}
	for (int i = 0; i < nclients; i++)
	{
		pthread_join(th[i], NULL);
		acked += cl[i].acked;
		failed += cl[i].failed;
		close(cl[i].logfd);
	}
	printf("bank: %lld acknowledged, %lld failed\n", acked, failed);
	return 0;
}
