/*
 * The `char **cause` convention (as tmux's): a function that fails may
 * say why in a malloc'd sentence its caller logs or shows, then frees.
 */
#ifndef STATBISECT_CAUSE_H
#define STATBISECT_CAUSE_H

/*
 * Sets *cause to a malloc'd printf-style message, freeing the message it
 * held (so *cause must be NULL or malloc'd).  Does nothing when `cause` is
 * NULL (the caller does not want to know); *cause is NULL when memory ran
 * out.
 */
void cause_set(char **cause, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
