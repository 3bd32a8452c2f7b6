# LockTime - build, test and package the lock-timing weaver.
#   make          build/locktime (release build, gcc)
#   make test     every test: C unit tests (ASan+UBSan) and end-to-end tests
#   make deps     install missing Debian packages (as root), else print the command
#   make demo     weave and run the sample app (the README's main command)

CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
LIBS    := -lzip -lmxml -lz -lcrypto
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1 -g

LIB_SRC := $(sort $(filter-out weaver/cli/%,$(wildcard weaver/*/*.c)))
CLI_SRC := $(sort $(wildcard weaver/cli/*.c))
INC     := $(addprefix -I,$(sort $(dir $(wildcard weaver/*/*.h))))
HDRS    := $(wildcard weaver/*/*.h)
UNIT    := $(sort $(wildcard tests/unit/test_*.c))
TOOLS   := $(sort $(wildcard tests/tools/*.c))

DEB_PKGS := gcc make pkg-config libzip-dev libmxml-dev zlib1g-dev libssl-dev libcmocka-dev mono-devel mono-utils mono-xbuild

all: build/locktime

build/locktime: $(LIB_SRC) $(CLI_SRC) $(HDRS) | build
	$(CC) $(WARN) $(CFLAGS) $(INC) -o $@ $(LIB_SRC) $(CLI_SRC) $(LIBS)

# The same tool built with AddressSanitizer and UndefinedBehaviorSanitizer: every test runs this one.
build/san/locktime: $(LIB_SRC) $(CLI_SRC) $(HDRS) | build/san
	$(CC) $(WARN) $(SAN) $(INC) -o $@ $(LIB_SRC) $(CLI_SRC) $(LIBS)

build/san/%: tests/unit/%.c $(LIB_SRC) $(HDRS) | build/san
	$(CC) $(WARN) $(SAN) $(INC) -Itests/unit -o $@ $< $(LIB_SRC) $(LIBS) -lcmocka

# Test programs that drive the library directly (e.g. the image round trip).
build/san/lt-%: tests/tools/%.c $(LIB_SRC) $(HDRS) | build/san
	$(CC) $(WARN) $(SAN) $(INC) -o $@ $< $(LIB_SRC) $(LIBS)

build build/san:
	mkdir -p $@

unit: $(patsubst tests/unit/%.c,build/san/%,$(UNIT)) $(patsubst tests/tools/%.c,build/san/lt-%,$(TOOLS)) build/san/locktime

test: unit
	bash tests/run.sh

demo: build/locktime
	bash tests/demo/run.sh

deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "all build and test dependencies are installed"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "run as root:  apt-get update && apt-get install -y $$missing"; exit 1; fi

clean:
	rm -rf build

.PHONY: all unit test demo deps clean
