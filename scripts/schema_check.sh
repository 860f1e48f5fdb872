#!/usr/bin/env bash
# The installed SQL schema of simdup must not change without a new version:
#   scripts/schema_check.sh HOST PORT [--write | --database DB]
# Describes every object of the extension as PostgreSQL sees it (function definitions,
# operators, table columns, indexes, constraints, triggers, whether pg_dump keeps a table's rows,
# and each object's comment and privileges) in a canonical order and compares the description with
# sql/schema/<version>.txt, the schema of the current version (Cargo.toml). A difference means
# the schema changed: bump the version in Cargo.toml, add the upgrade script
# sql/simdup--<old>--<new>.sql, and record the new schema with --write. A version without a
# recorded schema fails too, unless an upgrade script from the previous recorded version exists
# (then --write records it). With --database DB, the schema of the extension already in DB is
# checked instead of a fresh CREATE EXTENSION (the upgrade test: 0.1.0 updated to this version).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
host="$1"; port="$2"; mode="${3:-check}"; db="${4:-}"
version=$(python3 -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["package"]["version"])' "$root/Cargo.toml")
want="$root/sql/schema/$version.txt"
got=$(mktemp)
describe=$(cat <<'SQL'
SELECT format(E'== %s\n%s', pg_describe_object(d.classid, d.objid, 0),
  CASE d.classid
    WHEN 'pg_proc'::regclass THEN
      CASE WHEN p.prokind = 'f' OR p.prokind = 'p' THEN pg_get_functiondef(d.objid) ELSE p.prokind::text END
    WHEN 'pg_operator'::regclass THEN
      (SELECT format('%s(%s, %s) -> %s via %s commutator %s', oprname, oprleft::regtype, oprright::regtype,
                     oprresult::regtype, oprcode, oprcom::regoperator)
       FROM pg_operator WHERE oid = d.objid)
    WHEN 'pg_class'::regclass THEN
      (SELECT string_agg(format('%s %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                                CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                                coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '')), E'\n' ORDER BY a.attnum)
       FROM pg_attribute a LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
       WHERE a.attrelid = d.objid AND a.attnum > 0 AND NOT a.attisdropped)
      || coalesce(E'\n' || (SELECT string_agg(pg_get_indexdef(indexrelid), E'\n' ORDER BY pg_get_indexdef(indexrelid))
                            FROM pg_index WHERE indrelid = d.objid), '')
      || coalesce(E'\n' || (SELECT string_agg(pg_get_triggerdef(oid), E'\n' ORDER BY tgname)
                            FROM pg_trigger WHERE tgrelid = d.objid AND NOT tgisinternal), '')
      -- Constraints that are not an index (CHECK, foreign keys, exclusion; NOT NULL, which 18
      -- also lists here, is the column's), and whether pg_dump keeps its rows
      -- (pg_extension_config_dump), with which condition.
      || coalesce(E'\n' || (SELECT string_agg(format('constraint %s %s', conname, pg_get_constraintdef(oid)), E'\n' ORDER BY conname)
                            FROM pg_constraint WHERE conrelid = d.objid AND contype NOT IN ('p', 'u', 'n')), '')
      || coalesce(E'\n' || (SELECT format('dumped by pg_dump where %L', e.extcondition[i])
                            FROM generate_subscripts(e.extconfig, 1) i WHERE e.extconfig[i] = d.objid), '')
    WHEN 'pg_event_trigger'::regclass THEN
      (SELECT format('on %s execute %s tags %s', evtevent, evtfoid::regproc, evttags) FROM pg_event_trigger WHERE oid = d.objid)
    ELSE ''
  END
  -- What a user sees of it besides its definition: its comment and who may use it. The
  -- privileges are those granted or revoked against the object kind's default (acldefault), so
  -- that a default that differs between majors (a table owner's MAINTAIN, new in 17) is not a
  -- difference.
  || coalesce(E'\ncomment: ' || (SELECT description FROM pg_description
                                  WHERE objoid = d.objid AND classoid = d.classid AND objsubid = 0), '')
  || coalesce(E'\nprivileges: ' || (
       SELECT string_agg(format('%s %s %s %s', change, privilege_type, CASE change WHEN 'granted' THEN 'to' ELSE 'from' END,
                                CASE WHEN grantee = 0 THEN 'PUBLIC' ELSE grantee::regrole::text END),
                         ', ' ORDER BY change, grantee = 0 DESC, grantee::regrole::text, privilege_type)
       FROM ((SELECT 'granted', grantee, privilege_type FROM aclexplode(coalesce(o.acl, acldefault(o.kind, o.owner)))
              EXCEPT SELECT 'granted', grantee, privilege_type FROM aclexplode(acldefault(o.kind, o.owner)))
             UNION ALL
             (SELECT 'revoked', grantee, privilege_type FROM aclexplode(acldefault(o.kind, o.owner))
              EXCEPT SELECT 'revoked', grantee, privilege_type FROM aclexplode(coalesce(o.acl, acldefault(o.kind, o.owner)))))
            AS x(change, grantee, privilege_type)), ''))
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simdup'
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
-- The object's privileges, owner and kind for acldefault: functions and tables (sequences 's').
LEFT JOIN LATERAL (SELECT 'f'::"char", p.proacl, p.proowner WHERE p.oid IS NOT NULL
                   UNION ALL
                   SELECT CASE c.relkind WHEN 'S' THEN 's'::"char" ELSE 'r'::"char" END, c.relacl, c.relowner
                   FROM pg_class c WHERE d.classid = 'pg_class'::regclass AND c.oid = d.objid) AS o(kind, acl, owner) ON true
WHERE d.deptype = 'e'
  -- The row type of an extension's table (and its array type), which PostgreSQL 18 records as
  -- a member of its own: part of the table, described with it.
  AND NOT (d.classid = 'pg_type'::regclass
           AND EXISTS (SELECT FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem
                       WHERE t.oid = d.objid AND (t.typrelid <> 0 OR e.typrelid <> 0)))
ORDER BY pg_describe_object(d.classid, d.objid, 0);
SQL
)
if [ "$mode" = --database ]; then
  psql -X -q -At -v ON_ERROR_STOP=1 -h "$host" -p "$port" -U postgres -d "$db" -c "$describe" >"$got"
  mode=check
else
  psql -X -q -At -v ON_ERROR_STOP=1 -h "$host" -p "$port" -U postgres -d postgres >"$got" <<SQL
SET client_min_messages = warning;
DROP DATABASE IF EXISTS simdup_schema_check;
CREATE DATABASE simdup_schema_check;
\\c simdup_schema_check
CREATE EXTENSION simdup;
$describe
\\c postgres
DROP DATABASE simdup_schema_check;
SQL
fi
# COMMENT ON every object of the extension, the internal _simdup_* functions too (\df+ shows
# them to whoever looks): a missing comment fails the check as a schema difference does.
uncommented=$(awk '
  /^== / { if (name != "" && !seen) print name; name = substr($0, 4); seen = 0; next }
  /^comment: / { seen = 1 }
  END { if (name != "" && !seen) print name }' "$got")
if [ -n "$uncommented" ]; then
  echo "schema check: objects of the extension without a COMMENT ON:" >&2
  echo "$uncommented" | sed 's/^/  /' >&2
  rm -f "$got"; exit 1
fi
if [ "$mode" = --write ]; then
  cp "$got" "$want"; rm -f "$got"; echo "schema of $version recorded in sql/schema/$version.txt" >&2; exit 0
fi
if [ ! -f "$want" ]; then
  prev=$(ls "$root/sql/schema" 2>/dev/null | sed 's/\.txt$//' | sort -V | tail -1)
  echo "schema check: version $version has no recorded schema (sql/schema/$version.txt)." >&2
  if [ -n "$prev" ] && [ ! -f "$root/sql/simdup--$prev--$version.sql" ]; then
    echo "  and there is no upgrade script sql/simdup--$prev--$version.sql from $prev." >&2
  fi
  echo "  Write the upgrade script, then record the schema: scripts/schema_check.sh HOST PORT --write" >&2
  rm -f "$got"; exit 1
fi
if ! diff -u "$want" "$got" >&2; then
  echo "schema check: the installed schema differs from sql/schema/$version.txt (above)." >&2
  echo "  A schema change needs a new version in Cargo.toml and sql/simdup--$version--<new>.sql." >&2
  rm -f "$got"; exit 1
fi
rm -f "$got"; echo "schema check: the schema of $version is unchanged" >&2
