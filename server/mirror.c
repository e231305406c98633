#include "mirror.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "mirrorlock.h"
#include "server.h"

struct mirrorlock *mirror_lock(const char *repo_name)
{
	return mirrorlock_acquire(repo_name);
}

void mirror_unlock(struct mirrorlock *held)
{
	mirrorlock_release(held);
}

void mirror_path(char *buf, size_t size, const char *repo_name)
{
	snprintf(buf, size, "%s/repos/%s.git", server_config.data_dir,
		 repo_name);
}

int mirror_fetch(git_repository **out, const char *repo_name, const char *url,
		 char **err)
{
	char path[4096];

	*out = NULL;
	mirror_path(path, sizeof(path), repo_name);
	if (gitrepo_mirror(out, path, url, err) == 0)
		return 0;
	log_warn("fetch of %s failed, using the mirror as is: %s", repo_name,
		 *err);
	free(*err);
	*err = NULL;
	return gitrepo_open(out, path, err);
}
