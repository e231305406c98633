# statbisect build.  `make` builds the programs, `make check` runs every test
# with real parts (PostgreSQL, git, HTTP, SMTP), `make run` / `make demo` start
# the service locally.  Every lib/*.c goes into one static library that the
# programs and the unit tests link; each tests/unit/test_*.c is one cmocka
# program.

CC      ?= cc
CFLAGS  ?= -O2 -g
PKGS    := libmicrohttpd libgit2 gsl libpq jansson libcurl libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Ilib \
             $(PKG_CFLAGS) $(CFLAGS)
LDLIBS  = $(PKG_LIBS) -lpthread -lm

BUILD   := build
LIB_SRC := $(wildcard lib/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIBSB   := $(BUILD)/libstatbisect.a

SERVER_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard server/*.c server/store/*.c))
WORKER_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard worker/*.c))
SIM_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/sim/*.c))
BENCH_SRC  := $(wildcard bench/bench_*.c)
BENCHES    := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_TESTS := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# Unit tests of worker modules link the worker objects except main.
WORKER_LIB_OBJ := $(filter-out $(BUILD)/worker/main.o,$(WORKER_OBJ))
SERVER_LIB_OBJ := $(filter-out $(BUILD)/server/main.o,$(SERVER_OBJ))

CLI_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(wildcard cli/*.c))
# The programs' directory: bin/, or bin-asan/ for the sanitizer build.
BIN     := bin
PROGRAMS := $(BIN)/statbisect-server $(BIN)/statbisect-worker \
            $(BIN)/statbisect-sim \
            $(if $(wildcard cli/main.c),$(BIN)/statbisect)

.PHONY: all check limits simcheck unit integration contract run demo deps clean bench \
        check-asan check-all check-sanitize format format-check compare \
        compare-self fuzz faults sqlplace install

all: $(PROGRAMS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIBSB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BIN)/statbisect-server: $(SERVER_OBJ) $(LIBSB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BIN)/statbisect-worker: $(WORKER_OBJ) $(LIBSB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BIN)/statbisect: $(CLI_OBJ) $(LIBSB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BIN)/statbisect-sim: $(SIM_OBJ) $(LIBSB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o $(WORKER_LIB_OBJ) \
                       $(SERVER_LIB_OBJ) $(LIBSB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS)

$(BUILD)/bench/bench_%: $(BUILD)/bench/bench_%.o $(LIBSB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

deps:
	bash scripts/install-deps

unit: $(UNIT_TESTS)
	bash scripts/run-unit $(UNIT_TESTS)

integration: all
	/usr/bin/python3 tests/integration/run.py

# The fault suite (tests/faults/run.py): parts broken in the middle of a job.
faults: all
	/usr/bin/python3 tests/faults/run.py

# The old-versus-new server comparison (tests/compare/README.md):
# `make compare OLD=main` compares this checkout with main, NEW=REV another
# revision; compare-self replays the recording against this tree twice.
compare:
	@test -n "$(OLD)" || { echo "usage: make compare OLD=REV [NEW=REV]"; exit 2; }
	bash tests/compare/run.sh $(OLD) $(NEW)

# STYLE.md's size limits (tests/lint/limits.py): no function over 120
# lines in server/, no file over 700 lines in server/ or worker/.
limits:
	/usr/bin/python3 tests/lint/test_limits.py
	/usr/bin/python3 tests/lint/limits.py

# Issue 9's layering rule (tests/lint/sqlplace.py): no SQL in server/*.c
# outside server/store/ and db.c.
sqlplace:
	/usr/bin/python3 tests/lint/test_sqlplace.py
	/usr/bin/python3 tests/lint/sqlplace.py

# The simulator on several machines per job (tests/sim/test_machines.py):
# one machine's output unchanged; four machines (lib/spread.c) accurate,
# settling sooner than one machine's verdict.
simcheck: $(BIN)/statbisect-sim
	/usr/bin/python3 tests/sim/test_machines.py $(BIN)/statbisect-sim

compare-self: all
	bash tests/compare/run.sh --trees . .

# The shared acceptance check lives beside the checkout when it is there.
contract: all
	@if [ -f ../shared/contract-check.py ]; then \
	    /usr/bin/python3 ../shared/contract-check.py; \
	else echo "contract: ../shared/contract-check.py not present, skipped"; fi

ifeq ($(SANITIZE),1)
# make check SANITIZE=1: the unit and integration suites against
# AddressSanitizer and UndefinedBehaviorSanitizer builds of everything
# (build-asan/, bin-asan/); a leak, an error or undefined behaviour in the
# server, worker or CLI fails its test (the harness wants exit status 0).
check: check-sanitize
else
check: check-all
endif

check-all: deps
	$(MAKE) format-check
	$(MAKE) all $(UNIT_TESTS)
	bash scripts/run-unit $(UNIT_TESTS)
	$(MAKE) limits
	$(MAKE) sqlplace
	$(MAKE) simcheck
	/usr/bin/python3 tests/integration/run.py
	/usr/bin/python3 tests/faults/run.py
	@if [ -f tests/browser/run.sh ]; then bash tests/browser/run.sh; fi
	bash tests/compare/run.sh --trees . .
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS)
	$(MAKE) contract

# The unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer,
# in a build tree of their own.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
              -fno-omit-frame-pointer
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/tests/unit/lsan.supp:print_suppressions=0
check-asan:
	$(SAN_ENV) $(MAKE) BUILD=build-asan BIN=bin-asan CFLAGS="$(ASAN_FLAGS)" unit

check-sanitize: deps
	$(MAKE) BUILD=build-asan BIN=bin-asan CFLAGS="$(ASAN_FLAGS)" all
	$(SAN_ENV) $(MAKE) BUILD=build-asan BIN=bin-asan CFLAGS="$(ASAN_FLAGS)" unit
	$(SAN_ENV) STATBISECT_BIN_DIR=$(CURDIR)/bin-asan \
	    /usr/bin/python3 tests/integration/run.py

# Fuzzing (tests/fuzz/README.md): every parser that takes outside input,
# under libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer, in
# a build tree of its own.  `make fuzz FUZZ_SECONDS=N` runs each target N
# seconds from its seed corpus and its regression inputs; make check runs
# each FUZZ_CHECK_SECONDS.
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 10
FUZZ_BUILD   := build-fuzz
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Ilib \
                $(PKG_CFLAGS) -g -O1 -fno-omit-frame-pointer \
                -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=undefined
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,\
                  $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CODE    := $(LIB_SRC) $(filter-out server/main.c,\
                  $(wildcard server/*.c server/store/*.c)) \
                $(filter-out worker/main.c,$(wildcard worker/*.c))
FUZZ_LIB     := $(FUZZ_BUILD)/libfuzzcode.a

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_LIB): $(FUZZ_CODE:%.c=$(FUZZ_BUILD)/%.o)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_LIB)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS)

fuzz: $(FUZZ_TARGETS)
	bash tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Each benchmark prints its figures and fails when it misses the issue's
# target; all of them run, and then the target fails if one did.  The
# generated repositories (bench/genrepo.py) are kept between runs in
# STATBISECT_BENCH_CACHE when it is set, else made in a temporary
# directory each time.
bench: all $(BENCHES)
	@st=0; for b in $(BENCHES); do echo "== $$b"; $$b || st=1; done; \
	for p in claim_latency queue_claims memory http_jobs spread_e2e; do \
		echo "== bench/$$p.py"; /usr/bin/python3 bench/$$p.py || st=1; \
	done; exit $$st

run: deps all
	bash scripts/run serve

demo: deps all
	bash scripts/run demo

# Every C file the project keeps is formatted by the checked-in
# .clang-format; `make check` refuses a tree where one differs.
FORMAT_SRC = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
CLANG_FORMAT ?= clang-format-14

format:
	$(CLANG_FORMAT) -i $(FORMAT_SRC)

format-check:
	@bad=0; for f in $(FORMAT_SRC); do \
	    $(CLANG_FORMAT) "$$f" | cmp -s - "$$f" || \
	        { echo "format-check: $$f differs from .clang-format" \
	               "(run make format)"; bad=1; }; \
	done; exit $$bad

# `make install PREFIX=/usr DESTDIR=/tmp/pkg` (docs/OPERATIONS.md): the
# programs in PREFIX/bin, the migrations and the web files in
# PREFIX/share/statbisect, where the server finds them from its own place
# (server_share_dir_default), the systemd units with ExecStart in BINDIR,
# and example environment files in SYSCONFDIR/statbisect unless there are
# files there already.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SHAREDIR   ?= $(PREFIX)/share/statbisect
DOCDIR     ?= $(PREFIX)/share/doc/statbisect
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SHAREDIR)/sql \
	    $(DESTDIR)$(SHAREDIR)/web/templates $(DESTDIR)$(SHAREDIR)/web/static \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/statbisect \
	    $(DESTDIR)$(DOCDIR)
	install -m 755 $(PROGRAMS) $(DESTDIR)$(BINDIR)
	install -m 644 sql/*.sql $(DESTDIR)$(SHAREDIR)/sql
	install -m 644 web/openapi.yaml $(DESTDIR)$(SHAREDIR)/web
	install -m 644 web/templates/*.html $(DESTDIR)$(SHAREDIR)/web/templates
	install -m 644 web/static/* $(DESTDIR)$(SHAREDIR)/web/static
	install -m 644 docs/OPERATIONS.md $(DESTDIR)$(DOCDIR)
	for u in statbisect-server statbisect-worker; do \
	    sed 's|/usr/local/bin/|$(BINDIR)/|; s|/usr/local/share/|$(PREFIX)/share/|; s|/etc/statbisect/|$(SYSCONFDIR)/statbisect/|' \
	        etc/$$u.service > $(DESTDIR)$(UNITDIR)/$$u.service && \
	    chmod 644 $(DESTDIR)$(UNITDIR)/$$u.service || exit 1; \
	done
	for e in server worker; do \
	    f=$(DESTDIR)$(SYSCONFDIR)/statbisect/$$e.env; \
	    [ -e $$f ] || install -m 640 etc/$$e.env $$f || exit 1; \
	done

clean:
	rm -rf build build-asan build-fuzz bin bin-asan

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
-include $(shell find $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
