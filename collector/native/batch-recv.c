/*
 * batch_recv: reads many UDP datagrams per system call (Linux recvmmsg).
 *
 * Node's dgram socket costs ≈ 3 µs of CPU per datagram outside JS (a buffer,
 * a remote-info object, a callback into JS per datagram) on top of the
 * kernel's own work; at 100 000 datagrams/s that is a third of a core. The
 * flow socket thread (socket-thread.ts) instead reads a socket Node has
 * bound, in batches of up to 64 datagrams, into one staging buffer it owns.
 *
 * Three functions, no state, no threads:
 *   recvBatch(fd, stage, slotBytes, meta, max) → datagrams read (0: none
 *     waiting), or −errno. Datagram i is at stage[i*slotBytes …), and
 *     meta[i*8 …] holds its length, its address family (4 or 6), its port,
 *     its address (IPv4: one word; IPv6: four) as the network bytes, and
 *     its IPv6 scope id. slotBytes is at least 65 536, more than any UDP
 *     payload, so no datagram is ever cut short.
 *   waitReadable(fds, count, timeoutMs) → how many of the fds can be read
 *     (0: timed out), or −errno; EINTR counts as a time-out.
 *   addressText(meta, i) → datagram i's address as Node's remote info
 *     writes it: inet_ntop's text ("::ffff:10.0.0.1" for an IPv4 exporter on
 *     a dual-stack socket), and for a link-local IPv6 address with a scope
 *     "%" and the interface name (its number when it has none).
 * Every count and offset is checked here against the typed arrays given.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <node_api.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_BATCH 64
#define META_WORDS 8
#define MIN_SLOT 65536
#define MAX_FDS 4096

static napi_value make_int(napi_env env, int32_t v) {
  napi_value out;
  napi_create_int32(env, v, &out);
  return out;
}

static napi_value fail(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

/* A typed array's bytes and its element count, or 0 when the value is not of that type. */
static int typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len) {
  bool is;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  napi_typedarray_type t;
  napi_value ab;
  size_t off;
  if (napi_get_typedarray_info(env, v, &t, len, data, &ab, &off) != napi_ok || t != want) return 0;
  return 1;
}

static napi_value RecvBatch(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5) return fail(env, "recvBatch(fd, stage, slotBytes, meta, max)");
  int32_t fd, slot, max;
  uint8_t *stage;
  int32_t *meta;
  size_t stage_len, meta_len;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || napi_get_value_int32(env, argv[2], &slot) != napi_ok ||
      napi_get_value_int32(env, argv[4], &max) != napi_ok)
    return fail(env, "recvBatch: fd, slotBytes and max are integers");
  if (!typed(env, argv[1], napi_uint8_array, (void **)&stage, &stage_len)) return fail(env, "recvBatch: stage is a Uint8Array");
  if (!typed(env, argv[3], napi_int32_array, (void **)&meta, &meta_len)) return fail(env, "recvBatch: meta is an Int32Array");
  if (slot < MIN_SLOT) return fail(env, "recvBatch: slotBytes is at least 65536");
  if (max <= 0) return make_int(env, 0);
  size_t count = (size_t)max;
  if (count > MAX_BATCH) count = MAX_BATCH;
  if (count > stage_len / (size_t)slot) count = stage_len / (size_t)slot;
  if (count > meta_len / META_WORDS) count = meta_len / META_WORDS;
  if (count == 0) return make_int(env, 0);

  struct mmsghdr msgs[MAX_BATCH];
  struct iovec iov[MAX_BATCH];
  struct sockaddr_in6 from[MAX_BATCH]; /* large enough for either family */
  memset(msgs, 0, sizeof(msgs[0]) * count);
  memset(from, 0, sizeof(from[0]) * count);
  for (size_t i = 0; i < count; i++) {
    iov[i].iov_base = stage + (size_t)i * (size_t)slot;
    iov[i].iov_len = (size_t)slot;
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
    msgs[i].msg_hdr.msg_name = &from[i];
    msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
  }
  int n = recvmmsg(fd, msgs, (unsigned)count, MSG_DONTWAIT, NULL);
  if (n < 0) return make_int(env, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno);
  for (int i = 0; i < n; i++) {
    int32_t *m = meta + (size_t)i * META_WORDS;
    m[0] = (int32_t)msgs[i].msg_len;
    if (from[i].sin6_family == AF_INET) {
      const struct sockaddr_in *a = (const struct sockaddr_in *)&from[i];
      m[1] = 4;
      m[2] = ntohs(a->sin_port);
      memcpy(&m[3], &a->sin_addr, 4);
      m[4] = m[5] = m[6] = m[7] = 0;
    } else {
      m[1] = 6;
      m[2] = ntohs(from[i].sin6_port);
      memcpy(&m[3], &from[i].sin6_addr, 16);
      m[7] = (int32_t)from[i].sin6_scope_id;
    }
  }
  return make_int(env, n);
}

static napi_value WaitReadable(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) return fail(env, "waitReadable(fds, count, timeoutMs)");
  int32_t *fds;
  size_t fds_len;
  int32_t count, timeout;
  if (!typed(env, argv[0], napi_int32_array, (void **)&fds, &fds_len)) return fail(env, "waitReadable: fds is an Int32Array");
  if (napi_get_value_int32(env, argv[1], &count) != napi_ok || napi_get_value_int32(env, argv[2], &timeout) != napi_ok)
    return fail(env, "waitReadable: count and timeoutMs are integers");
  if (count < 0 || (size_t)count > fds_len || count > MAX_FDS) return fail(env, "waitReadable: count is out of range");
  struct pollfd *p = calloc((size_t)count + 1, sizeof(struct pollfd));
  if (p == NULL) return make_int(env, -ENOMEM);
  for (int i = 0; i < count; i++) {
    p[i].fd = fds[i];
    p[i].events = POLLIN;
  }
  int r = poll(p, (nfds_t)count, timeout < 0 ? 0 : timeout);
  int err = errno;
  free(p);
  if (r < 0) return make_int(env, err == EINTR ? 0 : -err);
  return make_int(env, r);
}

static napi_value AddressText(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return fail(env, "addressText(meta, i)");
  int32_t *meta;
  size_t meta_len;
  int32_t i;
  if (!typed(env, argv[0], napi_int32_array, (void **)&meta, &meta_len)) return fail(env, "addressText: meta is an Int32Array");
  if (napi_get_value_int32(env, argv[1], &i) != napi_ok || i < 0 || ((size_t)i + 1) * META_WORDS > meta_len) return fail(env, "addressText: i is out of range");
  const int32_t *m = meta + (size_t)i * META_WORDS;
  char text[INET6_ADDRSTRLEN + 1 + IF_NAMESIZE];
  if (inet_ntop(m[1] == 4 ? AF_INET : AF_INET6, &m[3], text, INET6_ADDRSTRLEN) == NULL) text[0] = '\0';
  struct in6_addr a6;
  memcpy(&a6, &m[3], sizeof(a6));
  uint32_t scope = (uint32_t)m[7];
  if (m[1] == 6 && scope != 0 && IN6_IS_ADDR_LINKLOCAL(&a6) && text[0] != '\0') {
    /* As Node (libuv's uv_if_indextoname): the interface name, else its number. */
    size_t at = strlen(text);
    char name[IF_NAMESIZE];
    text[at++] = '%';
    if (if_indextoname(scope, name) != NULL) snprintf(text + at, sizeof(text) - at, "%s", name);
    else snprintf(text + at, sizeof(text) - at, "%u", scope);
  }
  napi_value out;
  napi_create_string_latin1(env, text, NAPI_AUTO_LENGTH, &out);
  return out;
}

static napi_value Init(napi_env env, napi_value exports) {
  const napi_property_descriptor fns[] = {
      {"recvBatch", NULL, RecvBatch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"waitReadable", NULL, WaitReadable, NULL, NULL, NULL, napi_enumerable, NULL},
      {"addressText", NULL, AddressText, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof(fns) / sizeof(fns[0]), fns);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
