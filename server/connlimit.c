#include "connlimit.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* One client address with open connections. */
struct connlimit_address {
	unsigned char bytes[16];
	unsigned char length; /* 4 or 16; 0: a free slot */
	unsigned count;
};

/* What the server knows of one connection (its socket context). */
struct connection_ctx {
	struct sockaddr_storage address;
	bool has_address;
	/* Past the soft limits: answered 503 and closed. */
	bool over_limit;
};

struct connlimit {
	pthread_mutex_t lock;
	unsigned total_max, per_address_max, total;
	/* Addresses with connections; grown as needed, never shrunk. */
	struct connlimit_address *addresses;
	size_t address_count, address_cap;
};

int connlimit_new(struct connlimit **out, unsigned total_max,
		  unsigned per_address_max)
{
	struct connlimit *limits;

	*out = NULL;
	if (total_max < 1 || per_address_max < 1)
		return -EINVAL;
	if ((limits = calloc(1, sizeof(*limits))) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&limits->lock, NULL);
	limits->total_max = total_max;
	limits->per_address_max = per_address_max;
	*out = limits;
	return 0;
}

void connlimit_free(struct connlimit *limits)
{
	if (limits == NULL)
		return;
	pthread_mutex_destroy(&limits->lock);
	free(limits->addresses);
	free(limits);
}

/* The address's bytes; 0 for a family that is not counted per address. */
static unsigned char address_key(const struct sockaddr *address,
				 unsigned char bytes[16])
{
	if (address == NULL)
		return 0;
	if (address->sa_family == AF_INET) {
		memcpy(bytes, &((const struct sockaddr_in *)address)->sin_addr,
		       4);
		return 4;
	}
	if (address->sa_family == AF_INET6) {
		memcpy(bytes,
		       &((const struct sockaddr_in6 *)address)->sin6_addr, 16);
		return 16;
	}
	return 0;
}

/* The slot of `address`, made when `make`; NULL when none (or no memory). */
static struct connlimit_address *address_slot(struct connlimit *limits,
					      const struct sockaddr *address,
					      bool make)
{
	unsigned char bytes[16];
	unsigned char length = address_key(address, bytes);
	struct connlimit_address *slot, *free_slot = NULL, *grown;
	size_t cap;

	if (length == 0)
		return NULL;
	for (size_t i = 0; i < limits->address_count; i++) {
		slot = &limits->addresses[i];
		if (slot->length == length &&
		    memcmp(slot->bytes, bytes, length) == 0)
			return slot;
		if (slot->length == 0 && free_slot == NULL)
			free_slot = slot;
	}
	if (!make)
		return NULL;
	if (free_slot == NULL) {
		if (limits->address_count == limits->address_cap) {
			cap =
			    limits->address_cap ? limits->address_cap * 2 : 64;
			grown =
			    realloc(limits->addresses, cap * sizeof(*grown));
			if (grown == NULL)
				return NULL;
			limits->addresses = grown;
			limits->address_cap = cap;
		}
		free_slot = &limits->addresses[limits->address_count++];
	}
	memcpy(free_slot->bytes, bytes, length);
	free_slot->length = length;
	free_slot->count = 0;
	return free_slot;
}

bool connlimit_enter(struct connlimit *limits, const struct sockaddr *address)
{
	struct connlimit_address *slot;
	bool within;

	pthread_mutex_lock(&limits->lock);
	limits->total++;
	within = limits->total <= limits->total_max;
	slot = address_slot(limits, address, true);
	if (slot != NULL) {
		slot->count++;
		within = within && slot->count <= limits->per_address_max;
	}
	pthread_mutex_unlock(&limits->lock);
	return within;
}

void connlimit_leave(struct connlimit *limits, const struct sockaddr *address)
{
	struct connlimit_address *slot;

	pthread_mutex_lock(&limits->lock);
	if (limits->total > 0)
		limits->total--;
	slot = address_slot(limits, address, false);
	if (slot != NULL && slot->count > 0 && --slot->count == 0)
		slot->length = 0;
	pthread_mutex_unlock(&limits->lock);
}

unsigned connlimit_count(struct connlimit *limits,
			 const struct sockaddr *address)
{
	struct connlimit_address *slot;
	unsigned count;

	pthread_mutex_lock(&limits->lock);
	if (address == NULL) {
		count = limits->total;
	} else {
		slot = address_slot(limits, address, false);
		count = slot != NULL ? slot->count : 0;
	}
	pthread_mutex_unlock(&limits->lock);
	return count;
}

unsigned connlimit_fit_descriptors(unsigned wanted)
{
	struct rlimit nofile;
	rlim_t room;

	if (getrlimit(RLIMIT_NOFILE, &nofile) != 0)
		return wanted;
	if (nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nofile) != 0)
			getrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (nofile.rlim_cur == RLIM_INFINITY ||
	    nofile.rlim_cur >= (rlim_t)wanted + wanted / 4 + 8 + 64)
		return wanted;
	room =
	    nofile.rlim_cur > 64 + 8 ? (nofile.rlim_cur - 64 - 8) * 4 / 5 : 0;
	return room < 8 ? 8 : (unsigned)room;
}

void connlimit_notify(void *cls, struct MHD_Connection *connection,
		      void **socket_context,
		      enum MHD_ConnectionNotificationCode code)
{
	struct connlimit *limits = cls;
	struct connection_ctx *ctx = *socket_context;
	const union MHD_ConnectionInfo *info;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		if ((ctx = calloc(1, sizeof(*ctx))) == NULL)
			return;
		info = MHD_get_connection_info(
		    connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (info != NULL && info->client_addr != NULL) {
			memcpy(&ctx->address, info->client_addr,
			       info->client_addr->sa_family == AF_INET6
				   ? sizeof(struct sockaddr_in6)
				   : sizeof(struct sockaddr_in));
			ctx->has_address = true;
		}
		ctx->over_limit = !connlimit_enter(
		    limits, ctx->has_address ? (struct sockaddr *)&ctx->address
					     : NULL);
		*socket_context = ctx;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && ctx != NULL) {
		connlimit_leave(limits, ctx->has_address
					    ? (struct sockaddr *)&ctx->address
					    : NULL);
		free(ctx);
		*socket_context = NULL;
	}
}

bool connlimit_connection_over(struct MHD_Connection *connection)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(
	    connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const struct connection_ctx *ctx =
	    info != NULL ? info->socket_context : NULL;

	return ctx != NULL && ctx->over_limit;
}
