/* QoE sessions (docs/qoe.md, issue 16): the CMCD v2 parser as a pure
 * function, and end to end on loopback the stepctl binary serving a real
 * control.db with --paths: the session of each 201, the report endpoint
 * (application/cmcd bodies, the query form) and hostile reports, checked
 * in the stored rows. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "cmcd.h"
#include "dlv_paths.h"
#include "qoe_outcome.h"
#include "ctl_test.h"
#include "serve_rig.h"

/* ---- the parser -------------------------------------------------------------- */

static struct cmcd_batch *parse(const char *body, size_t len)
{
    struct cmcd_batch *b = calloc(1, sizeof *b);
    assert_non_null(b);
    cmcd_parse_body(body, len, b);
    return b;
}

static void ctl_90_qoe_cmcd_parser_is_tolerant(void **state)
{
    (void)state;
    /* As hls.js 1.7.4 sends a play state and a response-received record. */
    static const char two[] =
        "e=ps,sn=1,sta=s,ts=1764600000000,v=2\n"
        "e=rr,rc=200,sn=2,ts=1764600000100,ttfb=12,ttlb=40,url=\"http://cdn/a/seg1.ts\","
        "bl=(1200 2400),br=(900),v=2\n";
    struct cmcd_batch *b = parse(two, strlen(two));
    assert_int_equal(b->n, 2);
    assert_int_equal(b->invalid, 0);
    assert_string_equal(b->r[0].e, "ps");
    assert_string_equal(b->r[0].sta, "s");
    assert_true(b->r[0].has_sn && b->r[0].sn == 1);
    assert_true(b->r[0].has_ts && b->r[0].ts == 1764600000000);
    assert_string_equal(b->r[1].url, "http://cdn/a/seg1.ts");
    assert_true(b->r[1].has_rc && b->r[1].rc == 200);
    assert_string_equal(b->r[0].text, "e=ps,sn=1,sta=s,ts=1764600000000,v=2");
    cmcd_batch_free(b);
    free(b);
    /* Unknown keys ignored (kept in the text), invalid values ignored and
     * counted: a string where an integer goes, a huge number, a negative
     * sn, a control byte in a string, a NUL byte, a bad token. */
    static const char bad[] = "sn=\"x\",ts=12345678901234567890,zz=1,com.other-k=\"y\",e=ps,"
                              "sta=p,sid=\"a\x01\",x=-5,sn=-3,cen=\"\0\",e2=@";
    b = parse(bad, sizeof bad - 1);
    assert_int_equal(b->n, 1);
    assert_false(b->r[0].has_sn);
    assert_false(b->r[0].has_ts);
    assert_int_equal(b->invalid, 6);
    assert_string_equal(b->r[0].text, "zz=1,com.other-k=\"y\",e=ps,sta=p,x=-5");
    cmcd_batch_free(b);
    free(b);
    /* v above 2: the record is refused whole and counted; the others stay. */
    static const char v3[] = "e=ps,sta=p,sn=4,v=3\ne=ps,sta=p,sn=5,v=2\n\n";
    b = parse(v3, strlen(v3));
    assert_int_equal(b->n, 1);
    assert_int_equal(b->refused, 1);
    assert_int_equal(b->r[0].sn, 5);
    cmcd_batch_free(b);
    free(b);
    /* Not CMCD at all. */
    static const char json[] = "{\"hello\": [1, 2]}";
    b = parse(json, strlen(json));
    assert_int_equal(b->n, 0);
    assert_int_equal(b->not_cmcd, 1);
    cmcd_batch_free(b);
    free(b);
    /* More records than a report may carry: the rest refused, counted. */
    char many[CMCD_MAX_RECORDS * 8 + 64];
    size_t k = 0;
    for (int i = 0; i < CMCD_MAX_RECORDS + 3; i++)
        k += (size_t)snprintf(many + k, sizeof many - k, "sn=%d\n", i);
    b = parse(many, k);
    assert_int_equal(b->n, CMCD_MAX_RECORDS);
    assert_int_equal(b->refused, 3);
    cmcd_batch_free(b);
    free(b);
    /* A value too long for its field is ignored whole: nothing of it is
     * kept, so the stored text re-reads to the same facts (fuzz_cmcd). */
    char longcen[300];
    int m = snprintf(longcen, sizeof longcen, "e=ce,cen=\"com.exactav-");
    memset(longcen + m, 'x', 200);
    strcpy(longcen + m + 200, "\"");
    b = parse(longcen, strlen(longcen));
    assert_int_equal(b->n, 1);
    assert_string_equal(b->r[0].cen, "");
    assert_string_equal(b->r[0].text, "e=ce");
    assert_int_equal(b->invalid, 1);
    cmcd_batch_free(b);
    free(b);
    /* The query form: one record; a boolean key alone. */
    b = calloc(1, sizeof *b);
    static const char q[] = "cen=\"com.exactav-exit-before-start\",e=ce,sn=9,bs";
    cmcd_parse_query(q, strlen(q), b);
    assert_int_equal(b->n, 1);
    assert_string_equal(b->r[0].cen, "com.exactav-exit-before-start");
    cmcd_batch_free(b);
    free(b);
}

/* ---- the service ----------------------------------------------------------------- */

struct answer {
    long status;
    char retry_after[32];
    char body[512];
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct answer *a = arg;
    size_t have = strlen(a->body), take = size * n;
    if (have + take < sizeof a->body)
        memcpy(a->body + have, p, take), a->body[have + take] = '\0';
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct answer *a = arg;
    if (!strncasecmp(p, "Retry-After:", 12))
        sscanf(p + 12, " %31s", a->retry_after);
    return size * n;
}

/* POST a report body of len bytes (NUL bytes allowed) to path. */
static long post(int port, const char *path, const char *body, size_t len, struct answer *a)
{
    char url[4096];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    memset(a, 0, sizeof *a);
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/cmcd");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return a->status;
}

static long report(int port, const char *sid, const char *body, struct answer *a)
{
    char path[256];
    snprintf(path, sizeof path, "/v1/sessions/%s/reports", sid);
    return post(port, path, body, strlen(body), a);
}

static void paths_unsigned(const struct ctl_world *w, char *path, size_t n)
{
    ctl_tmp_path(&w->t, "paths.json", path, n);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (char id = 'A'; id <= 'E'; id++)
        fprintf(f, "%s\"%c\": {\"renditions\": {\"r360\": \"http://cdn-%c.invalid/ch1/r360/"
                   "live.m3u8\"}, \"auth\": {\"type\": \"none\"}}",
                id == 'A' ? "{\"paths\": {" : ", ", id, id + 32);
    fputs("}}\n", f);
    fclose(f);
}

static void start(struct ctl_world *w, struct server *s, char g[33])
{
    char paths[256];
    serve_world_granted(w, g);
    paths_unsigned(w, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w->ev, NULL};
    server_start_with(w, s, extra);
}

static long long q(const struct ctl_world *w, const char *fmt, const char *arg)
{
    char sql[1024];
    snprintf(sql, sizeof sql, fmt, arg);
    return ctl_query_int(w->db, sql);
}

static bool is_hex32(const char *s)
{
    if (!s || strlen(s) != 32)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

static void ctl_91_qoe_allocation_carries_its_session_and_a_retry_the_same(void **state)
{
    (void)state;
    struct ctl_world w;
    struct server s;
    char g[33];
    start(&w, &s, g);
    json_t *a = serve_allocate(s.port, "q-1");
    json_t *sess = json_object_get(a, "session");
    const char *sid = json_string_value(json_object_get(sess, "id"));
    assert_true(is_hex32(sid));
    assert_string_not_equal(sid, "q-1");
    /* session comes right before playback_url, which stays last. */
    const char *keys[32];
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach(a, key, v) keys[n++] = key;
    assert_string_equal(keys[n - 1], "playback_url");
    assert_string_equal(keys[n - 2], "session");
    char want[1024];
    snprintf(want, sizeof want, "http://127.0.0.1:%d/v1/sessions/%s/reports", s.port, sid);
    assert_string_equal(json_string_value(json_object_get(sess, "report_url")), want);
    char *cmcd = json_dumps(json_object_get(sess, "cmcd"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    char exact[2048];
    snprintf(exact, sizeof exact,
             "{\"version\":2,\"sessionId\":\"%s\",\"contentId\":\"news-1\",\"includeKeys\":[],"
             "\"eventTargets\":[{\"url\":\"%s\",\"events\":[\"ps\",\"e\",\"t\",\"rr\",\"bc\","
             "\"ce\"],\"interval\":10,\"batchSize\":1,\"includeKeys\":[\"sta\",\"sn\",\"ts\","
             "\"e\",\"ec\",\"url\",\"rc\",\"ttfb\",\"ttlb\",\"bl\",\"br\",\"pb\",\"cen\","
             "\"com.exactav-rvfc-ms\"]}]}",
             sid, want);
    assert_string_equal(cmcd, exact);
    free(cmcd);
    /* The row, with the allocation's cohort, grant and path. */
    assert_int_equal(q(&w, "SELECT count(*) FROM sessions WHERE id = '%s' AND allocation_id = "
                           "'q-1' AND kind = 'viewer' AND path_id = 'C' AND channel = 'news-1' "
                           "AND master_fetched_at_ms IS NULL AND reports = 0",
                       sid),
                     1);
    assert_int_equal(q(&w, "SELECT count(*) FROM sessions WHERE grant_id = '%s'", g), 1);
    /* A retry: 200, the same body, hence the same session; no new row. */
    char url[128], body[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/allocations", s.port);
    snprintf(body, sizeof body,
             "{\"allocation_id\":\"q-1\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
             "\"isp\":\"isp-x\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
             "\"720p\"}}");
    struct cdn_http h;
    assert_int_equal(cdn_http("POST", url, NULL, body, &h), 0);
    assert_int_equal(h.status, 200);
    char *first = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(h.body, first);
    free(first);
    cdn_http_free(&h);
    assert_int_equal(q(&w, "SELECT count(*) FROM sessions%s", ""), 1);
    /* The first fetch of the master playlist is recorded (by the writer,
     * after the answer: wait for it). */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/sessions/%s/master.m3u8", s.port, sid);
    assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    cdn_http_free(&h);
    struct answer r;
    assert_int_equal(report(s.port, sid, "e=ps,sta=s,sn=1,ts=5,v=2", &r), 204);
    assert_int_equal(q(&w, "SELECT count(*) FROM sessions WHERE id = '%s' AND "
                           "master_fetched_at_ms IS NOT NULL", sid), 1);
    json_decref(a);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

static char *allocate_session(int port, const char *id)
{
    json_t *a = serve_allocate(port, id);
    char *sid = strdup(json_string_value(json_object_get(json_object_get(a, "session"), "id")));
    json_decref(a);
    return sid;
}

static void ctl_92_qoe_reports_are_stored_as_received_and_answered_by_status(void **state)
{
    (void)state;
    struct ctl_world w;
    struct server s;
    char g[33];
    start(&w, &s, g);
    char *sid = allocate_session(s.port, "q-1"), *other = allocate_session(s.port, "q-2");
    struct answer a;
    /* Two records of one body, stored before the 204, in order. */
    assert_int_equal(report(s.port, sid, "e=ps,sn=1,sta=s,ts=1000,v=2\n"
                                         "e=rr,sn=2,ts=990,rc=200,url=\"http://x/a.ts\",v=2\n",
                            &a),
                     204);
    assert_int_equal(q(&w, "SELECT count(*) FROM session_reports WHERE session_id = '%s' AND "
                           "form = 'body'", sid), 2);
    assert_int_equal(q(&w, "SELECT ts FROM session_reports WHERE session_id = '%s' AND seq = 2",
                       sid), 990);
    assert_int_equal(q(&w, "SELECT last_sn FROM sessions WHERE id = '%s'", sid), 2);
    /* The query form (what sendBeacon sends). */
    char path[512];
    snprintf(path, sizeof path, "/v1/sessions/%s/reports?CMCD=e%%3Dps%%2Csn%%3D3%%2Csta%%3Dp%%2C"
                                "ts%%3D1500", sid);
    assert_int_equal(post(s.port, path, "", 0, &a), 204);
    assert_int_equal(q(&w, "SELECT count(*) FROM session_reports WHERE session_id = '%s' AND "
                           "form = 'query' AND sta = 'p' AND sn = 3", sid), 1);
    /* A replayed report is not stored twice. */
    assert_int_equal(report(s.port, sid, "e=ps,sn=3,sta=p,ts=1500", &a), 204);
    assert_int_equal(q(&w, "SELECT reports FROM sessions WHERE id = '%s'", sid), 3);
    /* Not CMCD at all: 400, nothing stored. */
    assert_int_equal(report(s.port, sid, "{\"json\": true}", &a), 400);
    assert_non_null(strstr(a.body, "not_cmcd"));
    /* A forged session id, and one of another shape: 410 (stop sending). */
    assert_int_equal(report(s.port, "0123456789abcdef0123456789abcdef", "e=ps,sn=1", &a), 410);
    assert_non_null(strstr(a.body, "unknown_session"));
    /* A record naming another session's sid is refused and counted. */
    char body[512];
    snprintf(body, sizeof body, "e=ps,sn=4,sta=p,sid=\"%s\"", other);
    assert_int_equal(report(s.port, sid, body, &a), 204);
    assert_int_equal(q(&w, "SELECT count(*) FROM session_reports WHERE sn = 4%s", ""), 0);
    assert_int_equal(q(&w, "SELECT refused_records FROM sessions WHERE id = '%s'", sid), 1);
    /* NUL and control bytes, huge and negative numbers: the values are
     * ignored and counted, the rest of the record kept. */
    static const char hostile[] = "e=ps,sn=5,sta=r,ts=-7,rc=99999999999999999999,"
                                  "url=\"a\0b\",cen=\"\x7f\",sn=\x01";
    snprintf(path, sizeof path, "/v1/sessions/%s/reports", sid);
    assert_int_equal(post(s.port, path, hostile, sizeof hostile - 1, &a), 204);
    assert_int_equal(q(&w, "SELECT invalid_values FROM session_reports WHERE session_id = '%s' "
                           "AND sn = 5 AND ts IS NULL", sid), 5);
    assert_int_equal(q(&w, "SELECT invalid_values FROM sessions WHERE id = '%s'", sid), 5);
    /* v above 2 only: refused whole and counted, 400. */
    assert_int_equal(report(s.port, sid, "e=ps,sn=6,sta=p,v=3", &a), 400);
    assert_int_equal(q(&w, "SELECT refused_records FROM sessions WHERE id = '%s'", sid), 2);
    /* 1 MB, and 100,000 records: 413 above the body limit, nothing stored. */
    size_t big = 1 << 20;
    char *mb = malloc(big);
    for (size_t i = 0; i < big; i++)
        mb[i] = i % 16 == 15 ? '\n' : 'a';
    assert_int_equal(post(s.port, path, mb, big, &a), 413);
    size_t k = 0;
    for (int i = 0; i < 100000 && k + 16 < big; i++)
        k += (size_t)snprintf(mb + k, big - k, "sn=%d\n", 100 + i);
    assert_int_equal(post(s.port, path, mb, k, &a), 413);
    free(mb);
    assert_int_equal(q(&w, "SELECT reports FROM sessions WHERE id = '%s'", sid), 4);
    /* The session's rate: a burst beyond it gets 429 with Retry-After,
     * nothing of that report counted. */
    long last = 0;
    int n = 0;
    for (; n < 400 && (last = report(s.port, other, "e=t,sta=p", &a)) == 204; n++)
        ;
    assert_int_equal(last, 429);
    assert_true(atoi(a.retry_after) >= 1);
    assert_true(n >= 150 && n <= 250);
    assert_int_equal(q(&w, "SELECT reports FROM sessions WHERE id = '%s'", other), n);
    /* A record that says the player ended ends the session: 410 after. */
    assert_int_equal(report(s.port, sid, "e=ps,sn=7,sta=e,ts=9000\ne=ps,sn=8,sta=p", &a), 204);
    assert_int_equal(q(&w, "SELECT count(*) FROM sessions WHERE id = '%s' AND end_reason = "
                           "'sta=e' AND last_sn = 7", sid), 1);
    assert_int_equal(report(s.port, sid, "e=ps,sn=9,sta=p", &a), 410);
    assert_non_null(strstr(a.body, "session_ended"));
    assert_int_equal(q(&w, "SELECT count(*) FROM session_reports WHERE session_id = '%s' AND "
                           "sn > 7", sid), 0);
    free(sid);
    free(other);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}


/* A world whose recorded policy says how sessions count. */
static void start_with_policy(struct ctl_world *w, struct server *s, char g[33],
                              const char *exit_as, const char *max_rebuffer)
{
    ctl_world_begin(w);
    ctl_world_evidence(w, "ev-d-pre", "D", "MATCH", w->now - 300000, true);
    ctl_world_evidence(w, "ev-e-pre", "E", "MATCH", w->now - 300000, true);
    json_t *sit = serve_situation(w, SERVE_ORDER_CDE);
    if (exit_as) { /* NULL: a policy from before sessions, without classes */
        ctl_set(sit, "policy.qoe.classes", json_pack("{s:s,s:s}", "exit_before_start", exit_as,
                                                     "autoplay_refused", "excluded"));
        ctl_set(sit, "policy.qoe.min_completeness", json_string("0.9"));
    }
    if (max_rebuffer) { /* a policy `next` can pass on a handful of sessions */
        ctl_set(sit, "policy.qoe.min_samples", json_integer(2));
        ctl_set(sit, "policy.qoe.min_start_success_ratio", json_string("0.5"));
        ctl_set(sit, "policy.qoe.max_rebuffer_ratio", json_string(max_rebuffer));
        ctl_set(sit, "policy.steps", json_pack("{s:i,s:i,s:s}", "factor", 3, "max_allocations",
                                               50, "max_rate_per_s", "150000"));
    }
    char d[33], paths[256];
    assert_int_equal(ctl_decide_cli(&w->t, "sit.json", sit, w->ev, w->db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, "", g), 0);
    paths_unsigned(w, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w->ev, NULL};
    server_start_with(w, s, extra);
}

static void start_with_classes(struct ctl_world *w, struct server *s, char g[33],
                               const char *exit_as)
{
    start_with_policy(w, s, g, exit_as, NULL);
}

/* A session that fetched its master playlist and sent these records. */
static char *played(int port, const char *id, const char *records)
{
    char *sid = allocate_session(port, id), url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/sessions/%s/master.m3u8", port, sid);
    struct cdn_http h;
    assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    cdn_http_free(&h);
    struct answer a;
    if (records)
        assert_int_equal(report(port, sid, records, &a), 204);
    return sid;
}

static json_t *qoe_json(struct ctl_world *w, const char *args)
{
    assert_int_equal(ctl_run(&w->t, "qoe --db '%s' %s --json", w->db, args), 0);
    char *out = ctl_out(&w->t, "out");
    json_t *j = json_loads(out, JSON_DECODE_ANY, NULL);
    assert_non_null(j);
    free(out);
    return j;
}

static long long member(const json_t *o, const char *dotted)
{
    char key[128];
    snprintf(key, sizeof key, "%s", dotted);
    const json_t *v = o;
    for (char *k = strtok(key, "."); k; k = strtok(NULL, "."))
        v = json_object_get(v, k);
    assert_true(json_is_integer(v));
    return (long long)json_integer_value(v);
}

static double real(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static void ctl_93_qoe_command_computes_the_step_from_its_sessions(void **state)
{
    (void)state;
    struct ctl_world w;
    struct server s;
    char g[33];
    start_with_classes(&w, &s, g, "failure");
    /* success: startup 500 ms, 16.5 s playing, 2 s rebuffering, all observed */
    free(played(s.port, "q-ok", "e=ps,sn=1,sta=s,ts=1000\ne=ps,sn=2,sta=p,ts=1500\n"
                                "e=t,sn=3,sta=p,ts=11500\ne=ps,sn=4,sta=r,ts=12000\n"
                                "e=rr,sn=5,ts=11900,rc=200\ne=ps,sn=6,sta=p,ts=14000\n"
                                "e=t,sn=7,sta=p,ts=20000"));
    /* success whose RVFC frame time (700) is preferred over playing (800) */
    free(played(s.port, "q-rvfc", "e=ps,sn=1,sta=s,ts=0\ne=ps,sn=2,sta=p,ts=800\n"
                                  "e=ce,sn=3,cen=\"com.exactav-rvfc-ms\",com.exactav-rvfc-ms=700,"
                                  "ts=900"));
    free(played(s.port, "q-fail", "e=ps,sn=1,sta=s,ts=0\ne=ps,sn=2,sta=f,ts=300"));
    free(played(s.port, "q-exit", "e=ps,sn=1,sta=s,ts=0\n"
                                  "e=ce,sn=2,cen=\"com.exactav-exit-before-start\",ts=90"));
    free(played(s.port, "q-gap", "e=ps,sn=1,sta=s,ts=0\ne=ps,sn=3,sta=p,ts=400"));
    free(played(s.port, "q-auto", "e=ps,sn=1,sta=s,ts=0\n"
                                  "e=ce,sn=2,cen=\"com.exactav-autoplay-refused\",ts=5"));
    json_decref(serve_allocate(s.port, "q-unused"));
    char args[96];
    snprintf(args, sizeof args, "--grant %s", g);
    json_t *j = qoe_json(&w, args);
    /* exit before start counts as a failure, autoplay refused is excluded */
    assert_int_equal(member(j, "attempts"), 5);
    assert_int_equal(member(j, "successes"), 2);
    assert_int_equal(member(j, "failures"), 2);
    assert_int_equal(member(j, "unknown"), 1);
    assert_int_equal(member(j, "unused"), 1);
    assert_int_equal(member(j, "provenance.classes.exit_before_start"), 1);
    assert_int_equal(member(j, "provenance.classes.autoplay_refused"), 1);
    assert_int_equal(member(j, "provenance.excluded"), 1);
    assert_int_equal(member(j, "provenance.sessions_with_sn_gaps"), 1);
    assert_int_equal(member(j, "provenance.startup.p50_ms"), 500);
    assert_int_equal(member(j, "provenance.startup.p90_ms"), 700);
    assert_int_equal(member(j, "provenance.rebuffer.rebuffering_ms"), 2000);
    assert_int_equal(member(j, "provenance.rebuffer.playing_ms"), 16600);
    assert_true(real(j, "startup_p50_ms") == 500);
    assert_true(real(j, "startup_p90_ms") == 700);
    /* 2000 / 18600 = 0.10752688..., rounded up to the micro-unit */
    char *text = json_dumps(json_object_get(j, "rebuffer_ratio"), JSON_ENCODE_ANY);
    assert_string_equal(text, "0.107527");
    free(text);
    assert_true(json_is_true(json_object_get(j, "complete")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "cohort"),
                                                          "channel")), "news-1");
    assert_true(member(j, "observed_at_ms") >= w.now - 600000);
    /* The same sessions by cohort and path. */
    json_t *k = qoe_json(&w, "--cohort news-1,eu-west,isp-x,web-hlsjs,2026.11.3,720p --path C");
    assert_int_equal(member(k, "attempts"), 5);
    json_decref(k);
    /* A window before every session: nothing. */
    k = qoe_json(&w, "--cohort news-1,eu-west,isp-x,web-hlsjs,2026.11.3,720p --path C --until 1");
    assert_int_equal(member(k, "attempts"), 0);
    assert_null(json_object_get(k, "startup_p90_ms"));
    json_decref(k);
    json_decref(j);
    /* Usage: one scope exactly. */
    assert_int_equal(ctl_run(&w.t, "qoe --db '%s' --grant %s --path C", w.db, g), 64);
    assert_int_equal(ctl_run(&w.t, "qoe --db '%s' --cohort a,b --path C", w.db), 64);
    assert_int_equal(ctl_run(&w.t, "qoe --db '%s' --grant nosuch", w.db), 65);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

static void ctl_94_qoe_policy_without_classes_is_unknown_never_a_guess(void **state)
{
    (void)state;
    struct ctl_world w;
    struct server s;
    char g[33];
    start(&w, &s, g);
    assert_int_equal(ctl_run(&w.t, "qoe --db '%s' --grant %s --json", w.db, g), 65);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "qoe_classes_missing"));
    free(err);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}


/* ---- the aggregation's property ------------------------------------------------ */

static uint64_t next_rand(uint64_t *x) /* xorshift64: fixed seeds, the same every run */
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A random session: s, then a mix of play states and rr records whose ts
 * (the request's start, before the record was sent) is out of order, as
 * a player sends them; the truth is computed from the whole stream. */
static size_t random_stream(uint64_t *x, struct qoe_row *rows, size_t max)
{
    size_t n = 2 + next_rand(x) % (max - 2);
    int64_t ts = (int64_t)(next_rand(x) % 100000);
    static const char *const states[] = {"p", "p", "r", "a", "w", "f", "r", "p"};
    for (size_t i = 0; i < n; i++) {
        struct qoe_row *r = &rows[i];
        memset(r, 0, sizeof *r);
        r->has_sn = r->has_ts = true;
        r->sn = (int64_t)i + 1;
        ts += (int64_t)(next_rand(x) % 3000);
        bool rr = next_rand(x) % 4 == 0;
        r->ts = rr ? ts - (int64_t)(next_rand(x) % 2000) : ts;
        snprintf(r->e, sizeof r->e, "%s", rr ? "rr" : "ps");
        snprintf(r->sta, sizeof r->sta, "%s", i == 0 ? "s" : rr ? "" : states[next_rand(x) % 8]);
        r->received_at_ms = 1000 + (int64_t)i;
    }
    return n;
}

static void ctl_95_qoe_gaps_never_yield_an_unobserved_success_or_completeness(void **state)
{
    (void)state;
    enum { MAX = 40 };
    struct qoe_row full[MAX], kept[MAX], copy[MAX];
    const struct qoe_rules rules = {QOE_AS_FAILURE, QOE_AS_EXCLUDED, 900000};
    for (uint64_t seed = 1; seed <= 2000; seed++) {
        uint64_t x = seed * 0x9E3779B97F4A7C15ull;
        size_t n = random_stream(&x, full, MAX), k = 0;
        for (size_t i = 0; i < n; i++) /* each record lost with probability 1/5 */
            if (next_rand(&x) % 5)
                kept[k++] = full[i];
        struct qoe_session truth, seen;
        memcpy(copy, full, n * sizeof *full);
        qoe_session_outcome(true, copy, n, &truth);
        memcpy(copy, kept, k * sizeof *kept);
        /* shuffled: the outcome orders by sn, never by arrival */
        for (size_t i = k; i > 1; i--) {
            size_t j = next_rand(&x) % i;
            struct qoe_row t = copy[i - 1];
            copy[i - 1] = copy[j];
            copy[j] = t;
        }
        qoe_session_outcome(true, copy, k, &seen);
        /* A success is only ever one the whole stream has too, decided by
         * records received without a gap before them. */
        if (seen.cls == QOE_SUCCESS) {
            assert_int_equal(truth.cls, QOE_SUCCESS);
            size_t first_p = 0;
            while (strcmp(kept[first_p].sta, "p"))
                first_p++;
            for (size_t i = 1; i <= first_p; i++)
                assert_int_equal(kept[i].sn, kept[i - 1].sn + 1);
        }
        if (seen.cls != QOE_UNKNOWN)
            assert_int_equal(seen.cls, truth.cls);
        /* Nothing unobserved is claimed: the observed time never exceeds the
         * span nor the truth, rebuffering never exceeds the truth. */
        assert_true(seen.observed_ms <= seen.span_ms);
        assert_true(seen.playing_ms + seen.rebuffer_ms <= seen.observed_ms);
        if (seen.cls == QOE_SUCCESS) {
            assert_true(seen.observed_ms <= truth.observed_ms);
            assert_true(seen.rebuffer_ms <= truth.rebuffer_ms);
            assert_true(seen.playing_ms <= truth.playing_ms);
        }
        struct qoe_agg a = {0};
        assert_int_equal(qoe_agg_add(&a, &rules, &seen), 0);
        int64_t c = qoe_agg_completeness(&a);
        assert_true(c >= 0 && c <= 1000000);
        if (seen.span_ms > 0)
            assert_true(c * seen.span_ms <= seen.observed_ms * 1000000);
        assert_int_equal(a.successes + a.failures + a.unknown, a.attempts);
        qoe_agg_free(&a);
    }
}


/* `next` without a hand-written qoe: the step's own sessions decide. */
static void next_from_sessions(const char *exit_as, const char *max_rebuffer, int code,
                               const char *branch, const char *reason)
{
    struct ctl_world w;
    struct server s;
    char g[33];
    start_with_policy(&w, &s, g, exit_as, max_rebuffer);
    free(played(s.port, "q-ok", "e=ps,sn=1,sta=s,ts=1000\ne=ps,sn=2,sta=p,ts=1500\n"
                                "e=ps,sn=3,sta=r,ts=12000\ne=ps,sn=4,sta=p,ts=14000\n"
                                "e=t,sn=5,sta=p,ts=20000"));
    free(played(s.port, "q-ok2", "e=ps,sn=1,sta=s,ts=0\ne=ps,sn=2,sta=p,ts=800\n"
                                 "e=t,sn=3,sta=p,ts=10800"));
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_evidence(&w, "ev-step-1", "C", "MATCH", ctl_now_ms(), true);
    json_t *sit = serve_situation(&w, SERVE_ORDER_CDE), *c = ctl_cand(sit, "C");
    json_t *obs = json_pack("{s:O,s:O}", "access", json_object_get(c, "access"), "resources",
                            json_object_get(c, "resources"));
    ctl_shift_ms(obs, ctl_now_ms() - 10 -
                          json_integer_value(json_object_get(json_object_get(obs, "access"),
                                                             "observed_at_ms")));
    char path[256];
    ctl_write_json(&w.t, "obs.json", obs, path, sizeof path);
    json_decref(obs);
    json_decref(sit);
    int rc = ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --input '%s' --json", g, w.db,
                     w.ev, path);
    char *out = ctl_out(&w.t, "out"), *err = ctl_out(&w.t, "err");
    if (rc != code)
        fail_msg("next: exit %d: %s %s", rc, out, err);
    json_error_t je;
    json_t *r = json_loads(out, 0, &je);
    if (!r)
        fail_msg("next: not JSON: %s at %d: %.300s", je.text, je.position,
                 out + (je.position > 100 ? je.position - 100 : 0));
    assert_string_equal(json_string_value(json_object_get(r, "branch")), branch);
    assert_non_null(strstr(json_string_value(json_object_get(r, "reason")), reason));
    /* The record says the QoE came from the step's sessions, with provenance. */
    json_t *src = json_object_get(r, "qoe_source");
    assert_string_equal(json_string_value(json_object_get(src, "source")), "sessions");
    if (exit_as)
        assert_int_equal(member(src, "provenance.classes.success"), 2);
    else
        assert_string_equal(json_string_value(json_object_get(src, "status")), "UNKNOWN");
    json_decref(r);
    free(out);
    free(err);
    ctl_world_end(&w);
}

static void ctl_96_qoe_next_decides_from_the_steps_own_sessions(void **state)
{
    (void)state;
    /* 2000 ms rebuffering of 20000 observed: 0.1 */
    next_from_sessions("failure", "0.02", 4, "negative", "qoe_rebuffer_above_max");
    next_from_sessions("failure", "0.5", 0, "positive", "step observed");
    /* A recorded policy without policy.qoe.classes: UNKNOWN, never a guess. */
    next_from_sessions(NULL, "0.5", 4, "negative", "qoe UNKNOWN qoe_classes_missing");
}


/* decide: a candidate without qoe takes it from its path's sessions, the
 * record says so, and replay recomputes it identical. */
static void ctl_97_qoe_decide_fills_a_missing_qoe_from_sessions_and_replays(void **state)
{
    (void)state;
    struct ctl_world w;
    struct server s;
    char g[33];
    start_with_policy(&w, &s, g, "failure", "0.5");
    free(played(s.port, "q-ok", "e=ps,sn=1,sta=s,ts=1000\ne=ps,sn=2,sta=p,ts=1500\n"
                                "e=t,sn=3,sta=p,ts=11500"));
    free(played(s.port, "q-ok2", "e=ps,sn=1,sta=s,ts=0\ne=ps,sn=2,sta=p,ts=800\n"
                                 "e=t,sn=3,sta=p,ts=10800"));
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    json_t *sit = serve_situation(&w, SERVE_ORDER_CDE);
    ctl_set(sit, "policy.qoe.classes",
            json_pack("{s:s,s:s}", "exit_before_start", "failure", "autoplay_refused", "unknown"));
    ctl_set(sit, "policy.qoe.min_completeness", json_string("0.9"));
    ctl_set(sit, "policy.qoe.min_samples", json_integer(2));
    ctl_set(sit, "policy.qoe.min_start_success_ratio", json_string("0.5"));
    json_object_del(ctl_cand(sit, "C"), "qoe");
    json_object_del(ctl_cand(sit, "C"), "decision_time_ms");
    json_object_del(sit, "decision_time_ms");
    char path[256], no_classes[256];
    ctl_write_json(&w.t, "sit2.json", sit, path, sizeof path);
    json_object_del(json_object_get(json_object_get(sit, "policy"), "qoe"), "classes");
    ctl_write_json(&w.t, "sit3.json", sit, no_classes, sizeof no_classes);
    json_decref(sit);
    int rc = ctl_run(&w.t, "decide --input '%s' --evidence '%s' --db '%s' --json", path, w.ev,
                     w.db);
    char *out = ctl_out(&w.t, "out");
    json_t *r = json_loads(out, 0, NULL);
    if (!r || rc > 4)
        fail_msg("decide: exit %d: %s", rc, out);
    free(out);
    const char *id = json_string_value(json_object_get(r, "decision_id"));
    assert_non_null(id);
    char did[40];
    snprintf(did, sizeof did, "%s", id);
    json_decref(r);
    /* The recorded situation carries the filled qoe and where it came from. */
    assert_int_equal(q(&w, "SELECT json_extract(situation, '$.candidates[2].qoe.successes') "
                           "FROM decisions WHERE id = '%s'", did), 2);
    assert_int_equal(q(&w, "SELECT count(*) FROM decisions WHERE id = '%s' AND "
                           "json_extract(situation, '$.candidates[2].qoe_source.source') = "
                           "'sessions'", did), 1);
    assert_int_equal(q(&w, "SELECT count(*) FROM decision_conditions WHERE decision_id = '%s' "
                           "AND path_id = 'C' AND condition = 'qoe' AND reason <> 'qoe_missing'",
                       did), 1);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", did, w.db), 0);
    /* Without policy.qoe.classes the sessions cannot be judged: the
     * condition names that, never a guess and never plain qoe_missing. */
    rc = ctl_run(&w.t, "decide --input '%s' --evidence '%s' --db '%s' --json", no_classes, w.ev,
                 w.db);
    out = ctl_out(&w.t, "out");
    r = json_loads(out, 0, NULL);
    if (!r || rc > 4)
        fail_msg("decide without classes: exit %d: %s", rc, out);
    free(out);
    snprintf(did, sizeof did, "%s", json_string_value(json_object_get(r, "decision_id")));
    json_decref(r);
    assert_int_equal(q(&w, "SELECT count(*) FROM decision_conditions WHERE decision_id = '%s' "
                           "AND path_id = 'C' AND condition = 'qoe' AND status = 'UNKNOWN' AND "
                           "reason = 'qoe_classes_missing'", did), 1);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", did, w.db), 0);
    ctl_world_end(&w);
}

/* paths.json with path A's rendition at url_a and B's at url_b, parsed. */
static int two_paths(struct dlv_paths *ps, const char *url_a, const char *url_b, char *err, size_t n)
{
    char text[1024];
    snprintf(text, sizeof text, "{\"paths\": {\"A\": {\"renditions\": {\"r\": \"%s\"}, \"auth\": {\"type\": "
             "\"none\"}}, \"B\": {\"renditions\": {\"r\": \"%s\"}, \"auth\": {\"type\": \"none\"}}}}",
             url_a, url_b);
    return dlv_paths_parse(text, strlen(text), NULL, ps, err, n);
}

/* A session that played, one segment response reported from url. */
static char *played_from(int port, const char *id, const char *url)
{
    char *sid = played(port, id, NULL), body[512];
    snprintf(body, sizeof body, "e=ps,sn=1,sta=s,ts=0\ne=ps,sn=2,sta=p,ts=500\ne=rr,sn=3,ts=400,rc=200,url=\"%s\"",
             url);
    struct answer a;
    assert_int_equal(report(port, sid, body, &a), 204);
    return sid;
}

/* Served by (issue 16): each rr record's url is attributed to the path
 * whose rendition place it is in; a session whose media came from another
 * path than its allocation's is out of context, kept apart and never the
 * allocated path's QoE.  A url of no path's is not attributed.  Two paths
 * in one place are refused when paths.json is read. */
static void ctl_89_qoe_media_from_another_path_is_out_of_context(void **state)
{
    (void)state;
    struct ctl_world w;
    struct server s;
    char g[33];
    start_with_classes(&w, &s, g, "failure");
    char *sid = played_from(s.port, "q-here", "http://CDN-C.invalid:80/ch1/r360/s1.ts?Policy=x");
    assert_int_equal(q(&w, "SELECT count(*) FROM sessions WHERE id = '%s' AND path_id = 'C'", sid), 1);
    free(sid); /* the grant's path: C (SERVE_ORDER_CDE) */
    sid = played_from(s.port, "q-there", "http://cdn-d.invalid/ch1/r360/s1.ts");
    assert_int_equal(q(&w, "SELECT count(*) FROM session_reports WHERE session_id = '%s' AND served_by = 'D'", sid),
                     1);
    free(sid);
    sid = played_from(s.port, "q-nowhere", "http://elsewhere.invalid/x.ts");
    assert_int_equal(q(&w, "SELECT count(*) FROM session_reports WHERE session_id = '%s' AND served_by IS NULL", sid),
                     3);
    free(sid);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM session_reports WHERE served_by = 'C'"), 1);
    char args[96];
    snprintf(args, sizeof args, "--grant %s", g);
    json_t *j = qoe_json(&w, args);
    assert_int_equal(member(j, "out_of_context"), 1);
    assert_int_equal(member(j, "attempts"), 2);
    assert_int_equal(member(j, "successes"), 2);
    json_decref(j);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    /* two paths in one place cannot be told apart: refused */
    static struct dlv_paths ps; /* large: not on the stack */
    char err[512];
    assert_int_equal(two_paths(&ps, "https://cdn.example/ch1/a.m3u8", "https://CDN.example:443/ch1/b.m3u8", err,
                               sizeof err), -1);
    assert_non_null(strstr(err, "could not be told apart"));
    /* nested directories stay apart: the longest wins */
    assert_int_equal(two_paths(&ps, "https://cdn.example/ch1/a.m3u8", "https://cdn.example/ch1/b/b.m3u8", err,
                               sizeof err), 0);
    assert_string_equal(dlv_paths_served_by(&ps, "https://cdn.example/ch1/b/s1.ts"), "B");
    assert_string_equal(dlv_paths_served_by(&ps, "https://cdn.example/ch1/s1.ts?x=1"), "A");
    assert_null(dlv_paths_served_by(&ps, "https://cdn.example/other/s1.ts"));
    assert_null(dlv_paths_served_by(&ps, "http://cdn.example/ch1/s1.ts")); /* another scheme */
    assert_null(dlv_paths_served_by(&ps, "not a url"));
    dlv_paths_free(&ps);
    ctl_world_end(&w);
}

/* `stepctl qoe` reads the records once in the order stored and hands each
 * to its session (docs/qoe.md, Benchmark): records of sessions sent
 * interleaved are grouped right, and the records of a session outside the
 * scope (allocated after --until) that lie between the scope's are passed
 * over.  A: a success (startup 500 ms); B: a failure, allocated later. */
static void ctl_218_interleaved_sessions_are_read_apart(void **state)
{
    (void)state;
    struct ctl_world w;
    struct server s;
    char g[33];
    start_with_classes(&w, &s, g, "failure");
    char *a = played(s.port, "i-a", "e=ps,sn=1,sta=s,ts=1000");
    usleep(20000);
    char *b = played(s.port, "i-b", "e=ps,sn=1,sta=s,ts=0");
    struct answer ans;
    assert_int_equal(report(s.port, a, "e=ps,sn=2,sta=p,ts=1500", &ans), 204);
    assert_int_equal(report(s.port, b, "e=ps,sn=2,sta=f,ts=300", &ans), 204);
    assert_int_equal(report(s.port, a, "e=t,sn=3,sta=p,ts=11500", &ans), 204);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    char args[200];
    snprintf(args, sizeof args, "--grant %s", g);
    json_t *j = qoe_json(&w, args);
    assert_int_equal(member(j, "attempts"), 2);
    assert_int_equal(member(j, "successes"), 1);
    assert_int_equal(member(j, "failures"), 1);
    assert_int_equal(member(j, "provenance.startup.p50_ms"), 500);
    json_decref(j);
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT created_at_ms FROM sessions WHERE id = '%s'", b);
    long long until = ctl_query_int(w.db, sql);
    snprintf(args, sizeof args, "--cohort news-1,eu-west,isp-x,web-hlsjs,2026.11.3,720p --path C --until %lld",
             until);
    j = qoe_json(&w, args);
    assert_int_equal(member(j, "attempts"), 1);
    assert_int_equal(member(j, "successes"), 1);
    assert_int_equal(member(j, "failures"), 0);
    json_decref(j);
    free(a);
    free(b);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctl_90_qoe_cmcd_parser_is_tolerant),
        cmocka_unit_test_teardown(ctl_91_qoe_allocation_carries_its_session_and_a_retry_the_same,
                                  kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_92_qoe_reports_are_stored_as_received_and_answered_by_status, kill_leftovers),
        cmocka_unit_test(ctl_95_qoe_gaps_never_yield_an_unobserved_success_or_completeness),
        cmocka_unit_test_teardown(ctl_93_qoe_command_computes_the_step_from_its_sessions,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_218_interleaved_sessions_are_read_apart, kill_leftovers),
        cmocka_unit_test_teardown(ctl_96_qoe_next_decides_from_the_steps_own_sessions,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_97_qoe_decide_fills_a_missing_qoe_from_sessions_and_replays,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_94_qoe_policy_without_classes_is_unknown_never_a_guess,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_89_qoe_media_from_another_path_is_out_of_context,
                                  kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
