# shellcheck shell=bash
# ensure-services.sh — make PostgreSQL, Redis and ClickHouse available to the tests.
#
# Source it from bash (scripts/test.sh does), then call ensure_services:
#
#   source scripts/ensure-services.sh
#   ensure_services
#
# For each service it uses what answers on 127.0.0.1 (PostgreSQL :5432, Redis
# :6379); when nothing answers it installs the Debian package if needed and
# starts a throw-away instance on loopback, stopped again at exit. It creates
# a fresh PostgreSQL database for the run and drops it at exit.
#
# Exports:
#   SLUICE_TEST_POSTGRES_URL  postgres://USER@127.0.0.1:PORT/sluice_test_PID?sslmode=disable
#   SLUICE_TEST_REDIS_URL     redis://127.0.0.1:PORT/15
#   SLUICE_TEST_CLICKHOUSE_URL clickhouse://127.0.0.1:PORT/default (a private
#                             server; see ensure_clickhouse for the others)
#
# A variable already set in the environment is used as given. Under CI=true a
# service that cannot be made available is a hard failure (ensure_services
# returns non-zero); otherwise it is a warning, the variable stays unset and
# the integration tests skip.
#
# Cleanup runs from an EXIT trap installed by ensure_services; a caller that
# needs its own EXIT trap must call sluice_services_cleanup from it.

_svc_log() { printf 'ensure-services: %s\n' "$*" >&2; }

# _svc_fail reports a service that could not be made available: fatal under
# CI=true, a warning otherwise.
_svc_fail() {
	if [[ "${CI:-}" == "true" ]]; then
		_svc_log "ERROR: $* (CI=true: a missing service is a failure)"
		return 1
	fi
	_svc_log "WARNING: $*; its integration tests will be skipped"
	return 0
}

# _svc_tcp_open HOST PORT: does something accept connections there?
_svc_tcp_open() {
	(exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# _svc_free_port PREFERRED: print PREFERRED if nothing listens on it, else the
# first free port from PREFERRED+10000 on.
_svc_free_port() {
	local p=$1
	if ! _svc_tcp_open 127.0.0.1 "$p"; then
		echo "$p"
		return 0
	fi
	for ((p = $1 + 10000; p < $1 + 10100; p++)); do
		if ! _svc_tcp_open 127.0.0.1 "$p"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

_SVC_APT_UPDATED=""

# _svc_apt_install PKG...: install Debian packages (root, or passwordless sudo).
_svc_apt_install() {
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
			sudo=(sudo -n)
		else
			_svc_log "cannot install $* (not root and no passwordless sudo)"
			return 1
		fi
	fi
	if ! command -v apt-get >/dev/null; then
		_svc_log "cannot install $* (no apt-get)"
		return 1
	fi
	if [[ -z "$_SVC_APT_UPDATED" ]]; then
		_svc_log "apt-get update"
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || return 1
		_SVC_APT_UPDATED=1
	fi
	_svc_log "apt-get install $*"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "$@" >&2
}

# ---------------------------------------------------------------- PostgreSQL

_SVC_PG_HOST=127.0.0.1
_SVC_PG_PORT=""
_SVC_PG_USER=""
_SVC_PG_DB=""       # the database created for this run
_SVC_PG_DATADIR=""  # set when this script started the cluster
_SVC_PG_BIN=""      # directory of the server binaries (initdb, pg_ctl)

# _svc_psql DB SQL: run SQL as the chosen user over TCP.
_svc_psql() {
	PGCONNECT_TIMEOUT=5 psql -X -q -v ON_ERROR_STOP=1 -h "$_SVC_PG_HOST" -p "$_SVC_PG_PORT" \
		-U "$_SVC_PG_USER" -d "$1" -Atc "$2"
}

# _svc_pg_login PORT: find a superuser that can log in without a password;
# sets _SVC_PG_PORT and _SVC_PG_USER.
_svc_pg_login() {
	local user db
	_SVC_PG_PORT=$1
	for user in postgres root "$(id -un)"; do
		for db in postgres test template1; do
			_SVC_PG_USER=$user
			if _svc_psql "$db" 'select 1' >/dev/null 2>&1; then
				return 0
			fi
		done
	done
	_SVC_PG_USER=""
	return 1
}

_svc_pg_answers() {
	if command -v pg_isready >/dev/null; then
		pg_isready -q -h "$_SVC_PG_HOST" -p "$1" -t 3
	else
		_svc_tcp_open "$_SVC_PG_HOST" "$1"
	fi
}

# _svc_pg_find_bin: set _SVC_PG_BIN to the newest installed server's bin dir.
_svc_pg_find_bin() {
	local d
	_SVC_PG_BIN=""
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
		[[ -x "$d/initdb" && -x "$d/pg_ctl" ]] && _SVC_PG_BIN=$d
	done
	if [[ -z "$_SVC_PG_BIN" ]] && command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
		_SVC_PG_BIN=$(dirname "$(command -v initdb)")
	fi
	[[ -n "$_SVC_PG_BIN" ]]
}

# _svc_pg_start: start a throw-away cluster on loopback with trust auth.
_svc_pg_start() {
	if ! _svc_pg_find_bin || ! command -v psql >/dev/null; then
		_svc_apt_install postgresql postgresql-client || return 1
		_svc_pg_find_bin || return 1
	fi
	local port
	port=$(_svc_free_port 5432) || return 1
	_SVC_PG_DATADIR=$(mktemp -d /tmp/sluice-pg.XXXXXX)
	chmod 0755 "$_SVC_PG_DATADIR" # postgres must reach its data dir
	local as=()
	if [[ $(id -u) -eq 0 ]]; then
		# initdb refuses to run as root.
		id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
		chown postgres: "$_SVC_PG_DATADIR"
		as=(runuser -u postgres --)
	fi
	_svc_log "postgres: starting a throw-away cluster in $_SVC_PG_DATADIR on 127.0.0.1:$port"
	"${as[@]}" "$_SVC_PG_BIN/initdb" -D "$_SVC_PG_DATADIR/data" -U postgres --auth=trust \
		--encoding=UTF8 --locale=C >"$_SVC_PG_DATADIR/initdb.log" 2>&1 || {
		_svc_log "initdb failed:"; cat "$_SVC_PG_DATADIR/initdb.log" >&2; return 1; }
	"${as[@]}" "$_SVC_PG_BIN/pg_ctl" -D "$_SVC_PG_DATADIR/data" -l "$_SVC_PG_DATADIR/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $_SVC_PG_DATADIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
		start >/dev/null || {
		_svc_log "pg_ctl start failed:"; cat "$_SVC_PG_DATADIR/server.log" >&2; return 1; }
	_svc_pg_login "$port"
}

_svc_pg_stop() {
	[[ -n "$_SVC_PG_DATADIR" ]] || return 0
	local as=()
	[[ $(id -u) -eq 0 ]] && as=(runuser -u postgres --)
	"${as[@]}" "$_SVC_PG_BIN/pg_ctl" -D "$_SVC_PG_DATADIR/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$_SVC_PG_DATADIR"
	_svc_log "postgres: stopped the throw-away cluster"
	_SVC_PG_DATADIR=""
}

ensure_postgres() {
	if [[ -n "${SLUICE_TEST_POSTGRES_URL:-}" ]]; then
		_svc_log "postgres: using SLUICE_TEST_POSTGRES_URL from the environment"
		return 0
	fi
	if ! command -v psql >/dev/null && _svc_pg_answers 5432; then
		_svc_apt_install postgresql-client || true
	fi
	if command -v psql >/dev/null && _svc_pg_answers 5432 && _svc_pg_login 5432; then
		_svc_log "postgres: using the server on 127.0.0.1:5432 as user $_SVC_PG_USER"
	elif ! _svc_pg_start; then
		_svc_fail "postgres: no server on 127.0.0.1:5432 and none could be started"
		return
	fi
	_SVC_PG_DB="sluice_test_$$"
	if ! _svc_psql postgres "CREATE DATABASE $_SVC_PG_DB" 2>/dev/null &&
		! _svc_psql template1 "CREATE DATABASE $_SVC_PG_DB"; then
		_SVC_PG_DB=""
		_svc_fail "postgres: cannot create a database as $_SVC_PG_USER"
		return
	fi
	export SLUICE_TEST_POSTGRES_URL="postgres://$_SVC_PG_USER@$_SVC_PG_HOST:$_SVC_PG_PORT/$_SVC_PG_DB?sslmode=disable"
	_svc_log "postgres: created database $_SVC_PG_DB; SLUICE_TEST_POSTGRES_URL=$SLUICE_TEST_POSTGRES_URL"
}

_svc_pg_drop() {
	[[ -n "$_SVC_PG_DB" ]] || return 0
	local db=$_SVC_PG_DB
	_SVC_PG_DB=""
	# WITH (FORCE) ends sessions a killed test run left behind (PostgreSQL 13+).
	if _svc_psql postgres "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null ||
		_svc_psql template1 "DROP DATABASE IF EXISTS $db"; then
		_svc_log "postgres: dropped database $db"
	else
		_svc_log "WARNING: postgres: could not drop database $db"
	fi
}

# --------------------------------------------------------------------- Redis

_SVC_REDIS_PORT=""
_SVC_REDIS_DIR="" # set when this script started the server

# _svc_redis_ping PORT: does a Redis answer PING there?
_svc_redis_ping() {
	if command -v redis-cli >/dev/null; then
		[[ $(timeout 5 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) == PONG ]]
		return
	fi
	local reply
	reply=$(
		exec 2>/dev/null
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf 'PING\r\n' >&3
		IFS= read -r -t 3 line <&3 && printf '%s' "$line"
	) || return 1
	[[ "$reply" == "+PONG"* ]]
}

_svc_redis_start() {
	if ! command -v redis-server >/dev/null; then
		_svc_apt_install redis-server || return 1
		# The package may have started its own server on 6379.
		if _svc_redis_ping 6379; then
			_SVC_REDIS_PORT=6379
			return 0
		fi
	fi
	local port
	port=$(_svc_free_port 6379) || return 1
	_SVC_REDIS_DIR=$(mktemp -d /tmp/sluice-redis.XXXXXX)
	_svc_log "redis: starting a throw-away server on 127.0.0.1:$port"
	redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --daemonize yes \
		--dir "$_SVC_REDIS_DIR" --pidfile "$_SVC_REDIS_DIR/redis.pid" \
		--logfile "$_SVC_REDIS_DIR/redis.log" || return 1
	local i
	for ((i = 0; i < 50; i++)); do
		if _svc_redis_ping "$port"; then
			_SVC_REDIS_PORT=$port
			return 0
		fi
		sleep 0.1
	done
	cat "$_SVC_REDIS_DIR/redis.log" >&2 || true
	return 1
}

_svc_redis_stop() {
	[[ -n "$_SVC_REDIS_DIR" ]] || return 0
	local pid
	pid=$(cat "$_SVC_REDIS_DIR/redis.pid" 2>/dev/null || true)
	if [[ -n "$pid" ]]; then
		kill "$pid" 2>/dev/null || true
		local i
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	rm -rf "$_SVC_REDIS_DIR"
	_SVC_REDIS_DIR=""
	_svc_log "redis: stopped the throw-away server"
}

ensure_redis() {
	if [[ -n "${SLUICE_TEST_REDIS_URL:-}" ]]; then
		_svc_log "redis: using SLUICE_TEST_REDIS_URL from the environment"
		return 0
	fi
	if _svc_redis_ping 6379; then
		_SVC_REDIS_PORT=6379
		_svc_log "redis: using the server on 127.0.0.1:6379"
	elif ! _svc_redis_start; then
		_svc_fail "redis: no server on 127.0.0.1:6379 and none could be started"
		return
	fi
	# Database 15 is the tests' own; tests prefix their keys, so that runs
	# sharing one server do not collide, and nothing here flushes it.
	export SLUICE_TEST_REDIS_URL="redis://127.0.0.1:$_SVC_REDIS_PORT/15"
	_svc_log "redis: SLUICE_TEST_REDIS_URL=$SLUICE_TEST_REDIS_URL"
}

# ---------------------------------------------------------------- ClickHouse

_SVC_CH_DIR=""  # set when this script started the server
_SVC_CH_PID=""

# _svc_ch_answers PORT: does a ClickHouse server answer a query there?
_svc_ch_answers() {
	if command -v clickhouse-client >/dev/null; then
		[[ $(timeout 5 clickhouse-client --host 127.0.0.1 --port "$1" -q 'SELECT 1' 2>/dev/null) == 1 ]]
		return
	fi
	_svc_tcp_open 127.0.0.1 "$1"
}

# _svc_ch_write_config DIR PORT: a private server's config.xml and users.xml.
# No HTTP port (the driver speaks the native protocol); caches of 256 MiB;
# UTC; the pid file in DIR, so that whoever restarts the server (a fault
# test) leaves the pid where the cleanup finds it.
_svc_ch_write_config() {
	local dir=$1 port=$2
	mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas"
	cat >"$dir/config.xml" <<-EOF
		<?xml version="1.0"?>
		<yandex>
		    <logger>
		        <level>warning</level>
		        <log>$dir/server.log</log>
		        <errorlog>$dir/server.err.log</errorlog>
		        <size>100M</size>
		        <count>1</count>
		    </logger>
		    <listen_host>127.0.0.1</listen_host>
		    <tcp_port>$port</tcp_port>
		    <path>$dir/data/</path>
		    <tmp_path>$dir/tmp/</tmp_path>
		    <user_files_path>$dir/user_files/</user_files_path>
		    <format_schema_path>$dir/format_schemas/</format_schema_path>
		    <users_config>$dir/users.xml</users_config>
		    <default_profile>default</default_profile>
		    <default_database>default</default_database>
		    <timezone>UTC</timezone>
		    <pid>$dir/clickhouse-server.pid</pid>
		    <max_connections>1024</max_connections>
		    <max_concurrent_queries>200</max_concurrent_queries>
		    <mark_cache_size>268435456</mark_cache_size>
		    <uncompressed_cache_size>268435456</uncompressed_cache_size>
		    <mlock_executable>false</mlock_executable>
		</yandex>
	EOF
	cat >"$dir/users.xml" <<-EOF
		<?xml version="1.0"?>
		<yandex>
		    <profiles>
		        <default>
		            <max_memory_usage>4000000000</max_memory_usage>
		            <allow_experimental_low_cardinality_type>1</allow_experimental_low_cardinality_type>
		        </default>
		    </profiles>
		    <users>
		        <default>
		            <password></password>
		            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
		            <profile>default</profile>
		            <quota>default</quota>
		        </default>
		    </users>
		    <quotas>
		        <default>
		            <interval>
		                <duration>3600</duration>
		                <queries>0</queries>
		                <errors>0</errors>
		                <result_rows>0</result_rows>
		                <read_rows>0</read_rows>
		                <execution_time>0</execution_time>
		            </interval>
		        </default>
		    </quotas>
		</yandex>
	EOF
}

# _svc_ch_start: start a private server on a free loopback port.
_svc_ch_start() {
	if ! command -v clickhouse-server >/dev/null || ! command -v clickhouse-client >/dev/null; then
		_svc_apt_install clickhouse-server clickhouse-client || return 1
	fi
	local bin port
	bin=$(command -v clickhouse-server) || return 1
	port=$(_svc_free_port 9000) || return 1
	_SVC_CH_DIR=$(mktemp -d /tmp/sluice-clickhouse.XXXXXX)
	_svc_ch_write_config "$_SVC_CH_DIR" "$port"
	_svc_log "clickhouse: starting a private server in $_SVC_CH_DIR on 127.0.0.1:$port"
	# --daemon makes the server write its pid file (config <pid>), also when
	# a fault test restarts it the same way.
	"$bin" --daemon --config-file="$_SVC_CH_DIR/config.xml" >"$_SVC_CH_DIR/start.log" 2>&1 </dev/null || {
		_svc_log "clickhouse: clickhouse-server failed:"; cat "$_SVC_CH_DIR/start.log" >&2; _svc_ch_stop; return 1; }
	local i
	for ((i = 0; i < 300; i++)); do
		if _svc_ch_answers "$port"; then
			export SLUICE_TEST_CLICKHOUSE_URL="clickhouse://127.0.0.1:$port/default"
			export SLUICE_TEST_CLICKHOUSE_BIN=$bin
			export SLUICE_TEST_CLICKHOUSE_CONFIG=$_SVC_CH_DIR/config.xml
			export SLUICE_TEST_CLICKHOUSE_PIDFILE=$_SVC_CH_DIR/clickhouse-server.pid
			return 0
		fi
		[[ -n "$_SVC_CH_PID" ]] || _SVC_CH_PID=$(cat "$_SVC_CH_DIR/clickhouse-server.pid" 2>/dev/null || true)
		if [[ -n "$_SVC_CH_PID" ]] && ! kill -0 "$_SVC_CH_PID" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	_svc_log "clickhouse: the server did not answer:"
	tail -n 20 "$_SVC_CH_DIR/start.log" "$_SVC_CH_DIR/server.err.log" >&2 2>/dev/null || true
	_svc_ch_stop
	return 1
}

# _svc_ch_stop stops the private server: the pid it first had and the one in
# its pid file (a fault test may have restarted it), then removes its dir.
_svc_ch_stop() {
	[[ -n "$_SVC_CH_DIR" ]] || return 0
	local pids=() pid i
	[[ -n "$_SVC_CH_PID" ]] && pids+=("$_SVC_CH_PID")
	pid=$(cat "$_SVC_CH_DIR/clickhouse-server.pid" 2>/dev/null || true)
	[[ -n "$pid" && "$pid" != "$_SVC_CH_PID" ]] && pids+=("$pid")
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || continue
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill -9 "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$_SVC_CH_DIR"
	_SVC_CH_DIR=""
	_SVC_CH_PID=""
	_svc_log "clickhouse: stopped the private server"
}

# ensure_clickhouse makes a ClickHouse server available: the one named by
# SLUICE_TEST_CLICKHOUSE_URL, else a private one for this run (Debian's
# clickhouse-server, installed when missing). Besides the URL it exports,
# for fault tests that stop and start the server,
# SLUICE_TEST_CLICKHOUSE_BIN (clickhouse-server), SLUICE_TEST_CLICKHOUSE_CONFIG
# (its config.xml) and SLUICE_TEST_CLICKHOUSE_PIDFILE (the server's pid while
# it runs). Restart it with `"$BIN" --daemon --config-file="$CONFIG"`, so
# that the pid file stays current and the cleanup stops the new process.
ensure_clickhouse() {
	if [[ -n "${SLUICE_TEST_CLICKHOUSE_URL:-}" ]]; then
		_svc_log "clickhouse: using SLUICE_TEST_CLICKHOUSE_URL from the environment"
		return 0
	fi
	# Stop the server at exit also when called without ensure_services.
	trap sluice_services_cleanup EXIT
	if ! _svc_ch_start; then
		_svc_fail "clickhouse: no server could be started"
		return
	fi
	_svc_log "clickhouse: SLUICE_TEST_CLICKHOUSE_URL=$SLUICE_TEST_CLICKHOUSE_URL"
}

# ----------------------------------------------------------------------------

# sluice_services_cleanup drops the run's database and stops what this script
# started. It is idempotent.
sluice_services_cleanup() {
	_svc_pg_drop
	_svc_pg_stop
	_svc_redis_stop
	_svc_ch_stop
}

# ensure_services makes every service available and installs the cleanup.
ensure_services() {
	trap sluice_services_cleanup EXIT
	# Exit on a signal, so that the EXIT trap runs then too.
	trap 'exit 130' INT
	trap 'exit 143' TERM
	ensure_postgres || return 1
	ensure_redis || return 1
	ensure_clickhouse || return 1
}

# Run directly (bash scripts/ensure-services.sh), it checks the services,
# prints the variables and cleans up again: a smoke test of this file.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	set -euo pipefail
	ensure_services
	echo "SLUICE_TEST_POSTGRES_URL=${SLUICE_TEST_POSTGRES_URL:-}"
	echo "SLUICE_TEST_REDIS_URL=${SLUICE_TEST_REDIS_URL:-}"
	echo "SLUICE_TEST_CLICKHOUSE_URL=${SLUICE_TEST_CLICKHOUSE_URL:-}"
fi
