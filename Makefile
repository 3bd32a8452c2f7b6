# LockTime - build, test and package the lock-timing weaver.
#   make          build/locktime (release build, gcc) and the run-time template (weaver/runtime, .NET SDK)
#   make test     every test: C unit tests (ASan+UBSan) and end-to-end tests; T=NAME one suite or test
#   make deps     install missing Debian packages (as root; arm64 added as a foreign architecture), else print the command
#   make demo     weave and run the sample app (the README's main command)
#   make package  build/LockTime.<version>.nupkg: MSBuild targets, static locktime for linux-x64, linux-arm64
#                 and win-x64, LICENSE and third-party notices (nuget/); and build/dotnet-locktime.<version>.nupkg,
#                 the .NET tool that runs them (nuget/dotnet-locktime/); version <cli.h's>-dev.<time>,
#                 with RELEASE=1 cli.h's, which the binaries print (locktime --version)
#   make fuzz     run every fuzz target for FUZZ_SECONDS seconds each (docs/TESTING.md)
#   make bench    benchmarks: weave speed against Mono.Cecil, build overhead, run-time cost (BENCHMARKS.md)

CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
LIBS    := -ljansson -lprotobuf-c -lzip -lmxml -lz -lmbedcrypto -lm
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1 -g

# The portability layer has one file per host kind for each of its parts (weaver/core/<part>_posix.c and
# <part>_win.c: lt_file, lt_keys); each build takes its kind's.
POSIX_SRC := $(wildcard weaver/core/*_posix.c)
WIN_SRC := $(wildcard weaver/core/*_win.c)
LIB_ALL := $(sort $(filter-out weaver/cli/%,$(wildcard weaver/*/*.c weaver/*/*/*.c)))
LIB_SRC := $(filter-out $(WIN_SRC),$(LIB_ALL))
CLI_SRC := $(sort $(wildcard weaver/cli/*.c))
INC     := $(addprefix -I,$(sort $(dir $(wildcard weaver/*/*.h weaver/*/*/*.h)))) -Ibuild/gen
# Generated at build time: the pprof messages (protoc-c) and the HTML page as bytes (weaver/report),
# the run-time template as bytes (weaver/runtime).
GEN     := build/gen/rp_profile.pb-c.c build/gen/rp_page.c build/gen/runtime_template.c
HDRS    := $(wildcard weaver/*/*.h weaver/*/*/*.h) build/gen/rp_profile.pb-c.h
UNIT    := $(sort $(wildcard tests/unit/test_*.c))
TOOLS   := $(sort $(wildcard tests/tools/*.c))

DEB_PKGS := gcc make pkg-config libzip-dev libmxml-dev zlib1g-dev libmbedtls-dev libjansson-dev libprotobuf-c-dev protobuf-c-compiler libcmocka-dev mono-devel mono-utils mono-xbuild clang libclang-rt-dev strace cmake dpkg-dev unzip python3 golang-go chromium nodejs python3-jsonschema prometheus \
	file gcc-aarch64-linux-gnu libc6-dev-arm64-cross libmxml-dev:arm64 zlib1g-dev:arm64 libmbedtls-dev:arm64 libjansson-dev:arm64 libprotobuf-c-dev:arm64 \
	gcc-mingw-w64-x86-64 mingw-w64-x86-64-dev qemu-user-static wine wine64

all: build/locktime runtime

# The run-time template (weaver/runtime/README.md): C# built with the .NET SDK (deterministic), then
# build/gen/runtime_template.c, its bytes as a C array that every build of the weaver links.
RUNTIME_SRC := $(sort $(wildcard weaver/runtime/*.cs weaver/runtime/*/*.cs)) weaver/runtime/LockTime.Runtime.csproj weaver/runtime/Directory.Build.props
RUNTIME_DLL := build/runtime/LockTime.Runtime.dll

$(RUNTIME_DLL): $(RUNTIME_SRC)
	MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build weaver/runtime/LockTime.Runtime.csproj \
		-c Release -o build/runtime -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false
	touch $@

build/gen/runtime_template.c: $(RUNTIME_DLL) weaver/runtime/embed.py
	@mkdir -p build/gen
	python3 weaver/runtime/embed.py $(RUNTIME_DLL) $@ lt_runtime_template

runtime: build/gen/runtime_template.c

build/gen/rp_profile.pb-c.c build/gen/rp_profile.pb-c.h &: weaver/report/rp_profile.proto
	@mkdir -p build/gen
	protoc-c --c_out=build/gen --proto_path=weaver/report $<

build/gen/rp_page.c: weaver/report/rp_page.html weaver/runtime/embed.py
	@mkdir -p build/gen
	python3 weaver/runtime/embed.py $< $@ rp_page

build/locktime: $(LIB_SRC) $(CLI_SRC) $(GEN) $(HDRS) | build
	$(CC) $(WARN) $(CFLAGS) $(INC) -o $@ $(LIB_SRC) $(GEN) $(CLI_SRC) $(LDFLAGS) $(LIBS)

# The library built once with AddressSanitizer and UndefinedBehaviorSanitizer; the tool and every
# test program link it (each object is compiled once, not once per test).
SAN_OBJ := $(patsubst weaver/%.c,build/san/obj/%.o,$(LIB_SRC)) $(patsubst build/gen/%.c,build/san/gen/%.o,$(GEN))
SAN_LIB := build/san/libweaver.a

build/san/obj/%.o: weaver/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(SAN) $(INC) -c -o $@ $<

build/san/gen/%.o: build/gen/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(SAN) $(INC) -c -o $@ $<

$(SAN_LIB): $(SAN_OBJ)
	rm -f $@ && ar rcs $@ $^

# The tool built with the sanitizers: every end-to-end test runs this one.
build/san/locktime: $(CLI_SRC) $(SAN_LIB) $(HDRS) | build/san
	$(CC) $(WARN) $(SAN) $(INC) -o $@ $(CLI_SRC) $(SAN_LIB) $(LIBS)

build/san/%: tests/unit/%.c $(SAN_LIB) $(HDRS) | build/san
	$(CC) $(WARN) $(SAN) $(INC) -Itests/unit -o $@ $< $(SAN_LIB) $(LIBS) -lcmocka

# Test programs that drive the library directly (e.g. the image round trip).
build/san/lt-%: tests/tools/%.c $(SAN_LIB) $(HDRS) | build/san
	$(CC) $(WARN) $(SAN) $(INC) -o $@ $< $(SAN_LIB) $(LIBS)

# Fuzzing (fuzz/, docs/TESTING.md): one libFuzzer binary per target in fuzz/fuzz_targets.h, built with
# clang, ASan and UBSan.  `make fuzz` runs each for FUZZ_SECONDS (default 60) seconds, one at a time.
FUZZ_TARGETS := image sig weave roundtrip pdb mdb nupkg report monokey
FUZZ_SECONDS ?= 60
FUZZ_SRC := fuzz/fuzz_targets.c fuzz/fuzz_targets.h
# The targets that read assemblies also mutate their header fields (fuzz/fuzz_pe_fields.c).
FUZZ_PE_TARGETS := image weave roundtrip

build/fuzz/fuzz_%: fuzz/fuzz_main.c fuzz/fuzz_pe_fields.c fuzz/fuzz_pe_fields.h $(FUZZ_SRC) $(LIB_SRC) $(GEN) $(HDRS) | build/fuzz
	clang $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-DFUZZ_ENTRY=fuzz_$* $(if $(filter $*,$(FUZZ_PE_TARGETS)),-DFUZZ_PE_FIELDS) $(INC) -Ifuzz -o $@ \
		fuzz/fuzz_main.c fuzz/fuzz_pe_fields.c fuzz/fuzz_targets.c $(LIB_SRC) $(GEN) $(LIBS)

build/fuzz/fuzz-seeds: fuzz/fuzz_seeds.c $(LIB_SRC) $(GEN) $(HDRS) | build/fuzz
	$(CC) $(WARN) $(CFLAGS) $(INC) -o $@ $< $(LIB_SRC) $(GEN) $(LIBS)

# The regression test feeds fuzz/regress/<target>/* to the targets themselves.
build/san/test_fuzz: tests/unit/test_fuzz.c $(FUZZ_SRC) $(SAN_LIB) $(HDRS) | build/san
	$(CC) $(WARN) $(SAN) $(INC) -Ifuzz -o $@ $< fuzz/fuzz_targets.c $(SAN_LIB) $(LIBS) -lcmocka

# What `make fuzz` found, minimized into fuzz/corpus/ (kept in the repository, read by every run).
fuzz-corpus: fuzz-build
	bash fuzz/merge.sh $(FUZZ_TARGETS)

fuzz-build: $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_TARGETS)) build/fuzz/fuzz-seeds

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash fuzz/run.sh $(FUZZ_TARGETS)

build build/san build/fuzz:
	mkdir -p $@

# The NuGet package (nuget/LockTime.nuspec, packed by the .NET SDK) carries one static locktime per
# host (tools/<rid>/), cross-built here with Debian's toolchains (`make deps` installs them):
#   linux-x64    gcc, fully static (glibc included): runs on any x86-64 Linux whatever libraries it has
#   linux-arm64  aarch64-linux-gnu-gcc, the same, with Debian's :arm64 libraries
#   win-x64      x86_64-w64-mingw32-gcc with the *_win.c files; it imports only system DLLs
# Debian ships libjansson.a, libprotobuf-c.a, libmxml.a, libz.a and libmbedcrypto.a for Linux; libzip.a (and,
# for Windows, all six)
# are built from Debian's source packages by ci/static-libs.sh, once per clone, into build/static/libs/.
# The package's version: weaver/cli/cli.h's, the next release, for `make package RELEASE=1`; a local
# build is a prerelease of it, VERSION-dev.<UTC yyyymmddHHMMSS of the build> (SOURCE_DATE_EPOCH's when
# set), so that every rebuilt package has a version of its own and a newer one than the last: NuGet
# extracts a version once and goes on using that copy. The version of the last packages built goes to
# build/package/<dev|release>.version (the tests read it), the packages to build/LockTime.<version>.nupkg
# and build/dotnet-locktime.<version>.nupkg, the binaries they carry (which print it) to
# build/package/<dev|release>/<rid>/; build/static/ holds the same binaries printing cli.h's version -dev.
VERSION := $(shell sed -n 's/^\#define LOCKTIME_VERSION "\(.*\)"$$/\1/p' weaver/cli/cli.h)
PACKAGE_KIND := $(if $(RELEASE),release,dev)
PACKAGE_VERSION := build/package/$(PACKAGE_KIND).version
RIDS := linux-x64 linux-arm64 win-x64
# The binaries, by runtime identifier (linux-x64's path is the one the benchmarks and tests use).
TOOL_linux-x64 := build/static/locktime
TOOL_linux-arm64 := build/static/linux-arm64/locktime
TOOL_win-x64 := build/static/win-x64/locktime.exe
TOOLS_ALL := $(foreach r,$(RIDS),$(TOOL_$(r)))
# Per RID: compiler, Debian sources to build, link flags and system libraries, the host half of the portability layer.
CC_linux-x64 := $(CC)
CC_linux-arm64 := aarch64-linux-gnu-gcc
CC_win-x64 := x86_64-w64-mingw32-gcc
SOURCES_linux-x64 := libzip
SOURCES_linux-arm64 := libzip
SOURCES_win-x64 := zlib libzip mxml mbedtls jansson protobuf-c
LINK_linux-x64 := -static-pie -pthread
LINK_linux-arm64 := -static-pie -pthread -L/usr/lib/aarch64-linux-gnu
LINK_win-x64 := -static -lshell32 -ladvapi32
# mingw-w64's C99 printf (%zu, %lld), not msvcrt's.
DEFS_win-x64 := -D__USE_MINGW_ANSI_STDIO=1
LIB_linux-x64 := $(LIB_SRC)
LIB_linux-arm64 := $(LIB_SRC)
LIB_win-x64 := $(filter-out $(POSIX_SRC),$(LIB_ALL))
STATIC_LIBS = build/static/libs/$(1)/lib/libzip.a

build/static/libs/%/lib/libzip.a: ci/static-libs.sh
	bash ci/static-libs.sh $* build/static/libs/$* $(SOURCES_$*)

# The version the binaries print (weaver/cli/cli_version.c): compiled at each link, cli.h's with -dev
# for build/static/, the packages' version for the binaries packed (the package step below).
VERSION_SRC := weaver/cli/cli_version.c
STATIC_LINK_LIBS := -ljansson -lprotobuf-c -lzip -lmxml -lz -lmbedcrypto -lm
# LINK_STATIC RID, FLAGS, OUT: links the RID's objects and cli_version.c (compiled with FLAGS) into OUT.
LINK_STATIC = $(CC_$(1)) $(WARN) $(DEFS_$(1)) -O2 -s $(INC) $(2) -o $(3) $(OBJ_$(1)) $(VERSION_SRC) \
	-Lbuild/static/libs/$(1)/lib $(STATIC_LINK_LIBS) $(LINK_$(1))

# $(1): the RID.  One object per source under build/static/obj/<rid>/, its libraries' headers from
# build/static/libs/<rid> first, then Debian's (Linux).
define STATIC_TOOL
OBJ_$(1) := $(patsubst %.c,build/static/obj/$(1)/%.o,$(LIB_$(1)) $(GEN) $(filter-out $(VERSION_SRC),$(CLI_SRC)))
$$(OBJ_$(1)): build/static/obj/$(1)/%.o: %.c $(HDRS) $(call STATIC_LIBS,$(1))
	@mkdir -p $$(dir $$@)
	$(CC_$(1)) $(WARN) $(DEFS_$(1)) -O2 -Ibuild/static/libs/$(1)/include $(INC) -c -o $$@ $$<
$(TOOL_$(1)): $$(OBJ_$(1)) $(VERSION_SRC) $(HDRS)
	@mkdir -p $$(dir $$@)
	$$(call LINK_STATIC,$(1),,$$@)
endef
$(foreach r,$(RIDS),$(eval $(call STATIC_TOOL,$(r))))

# Every binary, for the tests that run them (tests/integration/hosts.sh).
static-tools: $(TOOLS_ALL)

# The package's notices: ours (nuget/THIRD-PARTY-NOTICES.txt), then the licence texts and Debian's
# copyright files of what the binaries link (the packages `make deps` installs).
NOTICES := build/package/THIRD-PARTY-NOTICES.txt
NOTICE_FILES := /usr/share/common-licenses/Apache-2.0 /usr/share/common-licenses/LGPL-2.1 \
	$(foreach p,libzip4 zlib1g libmxml1 libmbedcrypto7 libjansson4 libprotobuf-c1 libc6 libgcc-s1 mingw-w64-x86-64-dev,/usr/share/doc/$(p)/copyright)

$(NOTICES): nuget/THIRD-PARTY-NOTICES.txt
	@mkdir -p $(dir $@)
	{ cat $<; for f in $(NOTICE_FILES); do printf '\n\n==== %s\n\n' "$$f"; cat "$$f" || exit 1; done; } >$@.tmp
	mv $@.tmp $@

# The packages: the binaries linked again with the version baked in (build/package/<dev|release>/<rid>/),
# then LockTime (nuget/LockTime.nuspec) and the .NET tool dotnet-locktime (nuget/dotnet-locktime/, a
# launcher that runs them), both of that version.
PACKAGE_BIN = build/package/$(PACKAGE_KIND)/$(1)/$(notdir $(TOOL_$(1)))
TOOL_PROJECT := nuget/dotnet-locktime/dotnet-locktime.csproj
TOOL_PROJECT_SRC := $(wildcard nuget/dotnet-locktime/*)

$(PACKAGE_VERSION): $(foreach r,$(RIDS),$(OBJ_$(r))) $(VERSION_SRC) $(HDRS) $(NOTICES) nuget/LockTime.nuspec nuget/README.md \
		LICENSE $(wildcard msbuild/*) $(TOOL_PROJECT_SRC)
	@mkdir -p $(dir $@)
	@version=$(VERSION)$(if $(RELEASE),,-dev.$$(date -u $${SOURCE_DATE_EPOCH:+-d @$$SOURCE_DATE_EPOCH} +%Y%m%d%H%M%S)); \
	if [ -f $@ ]; then rm -f build/LockTime.$$(cat $@).nupkg build/dotnet-locktime.$$(cat $@).nupkg; fi; \
	$(foreach r,$(RIDS),mkdir -p $(dir $(call PACKAGE_BIN,$(r))) && \
		$(call LINK_STATIC,$(r),-DLOCKTIME_BUILD_VERSION=\"$$version\",$(call PACKAGE_BIN,$(r))) &&) \
	dotnet pack nuget/LockTime.nuspec -o build -p:version=$$version -p:notices="$(CURDIR)/$(NOTICES)" \
		$(foreach r,$(RIDS),-p:tool_$(subst -,_,$(r))="$(CURDIR)/$(call PACKAGE_BIN,$(r))") >$@.log && \
	MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet pack $(TOOL_PROJECT) -c Release -o build \
		-nologo -nodeReuse:false -p:UseSharedCompilation=false -p:Version=$$version -p:Notices="$(CURDIR)/$(NOTICES)" \
		-p:ToolLinuxX64="$(CURDIR)/$(call PACKAGE_BIN,linux-x64)" -p:ToolLinuxArm64="$(CURDIR)/$(call PACKAGE_BIN,linux-arm64)" \
		-p:ToolWinX64="$(CURDIR)/$(call PACKAGE_BIN,win-x64)" >>$@.log || { cat $@.log; exit 1; }; \
	echo $$version >$@ && echo "packages: build/LockTime.$$version.nupkg build/dotnet-locktime.$$version.nupkg"

package: $(PACKAGE_VERSION)

unit: $(patsubst tests/unit/%.c,build/san/%,$(UNIT)) $(patsubst tests/tools/%.c,build/san/lt-%,$(TOOLS)) build/san/locktime

# T=NAME: only the suites named like NAME, else the cmocka tests named NAME (tests/run.sh).
test: unit runtime
	bash tests/run.sh $(T)

demo: build/locktime
	bash tests/demo/run.sh

# Benchmarks (bench/, BENCHMARKS.md): not part of `make test`; BENCH_PARTS picks some of
# weave scaling calls lockmethods build runtime size sink lockorder stacks start.
bench: build/locktime
	bash bench/run.sh $(BENCH_PARTS)

deps:
	@native=$$(dpkg --print-architecture); \
	missing=$$(for p in $(DEB_PKGS); do case $$p in \
		*:*) dpkg -s $$p >/dev/null 2>&1 ;; \
		*) dpkg-query -W -f='$${db:Status-Abbrev}$${Architecture}\n' $$p 2>/dev/null | grep -qE "^ii *($$native|all)$$" ;; \
		esac || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "all build and test dependencies are installed"; \
	elif [ "$$(id -u)" = 0 ]; then \
		{ dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64; } && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "run as root:  dpkg --add-architecture arm64 && apt-get update && apt-get install -y $$missing"; exit 1; fi

clean:
	rm -rf build

.PHONY: all unit test demo deps clean fuzz fuzz-build fuzz-corpus package bench runtime static-tools
