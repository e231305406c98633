/* One line per event on standard error: time, level, program, message. */
#ifndef STATBISECT_LOG_H
#define STATBISECT_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Sets the program name printed on each line and the lowest level shown.
 * Call once at start; the name is not copied. */
void log_init(const char *program, enum log_level level);

/* printf-style; thread-safe (one write(2) per line). */
void log_msg(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
