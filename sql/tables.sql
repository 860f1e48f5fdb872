-- simdup: the registry of equipped tables, who may write it, and how it forgets dropped tables.

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------
CREATE TABLE simdup_tables (
    tbl regclass PRIMARY KEY,
    -- NULL when simdup_enable adopted an existing bigint fingerprint column.
    text_column name,
    fingerprint_column name NOT NULL,
    enabled_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- The dedup trigger's mode and maximum distance k, NULL when there is no trigger. Written
    -- only by simdup_enable, which checks them (src/args.rs); the trigger's own arguments are
    -- what it obeys.
    on_duplicate text,
    max_distance integer,
    -- The dedup trigger's verification thresholds (src/dedup/verify.rs), NULL when it does not
    -- verify (no trigger, an adopted fingerprint column, verify => false); containment NULL
    -- also when only the Jaccard threshold applies.
    threshold double precision,
    containment double precision
);
SELECT pg_catalog.pg_extension_config_dump('simdup_tables', '');
COMMENT ON TABLE simdup_tables IS
  'simdup: tables equipped by simdup_enable (kept by pg_dump): text column (NULL when an existing fingerprint column was adopted), fingerprint column, and the dedup trigger''s on_duplicate and max_distance (NULL without a trigger) and verification thresholds (NULL when it does not verify its candidates)';

-- Table owners (not only superusers) call simdup_enable/simdup_disable, which run as the caller:
-- everyone may write the table, and a trigger lets a row be added or removed only by the owner
-- of the table it names (or once that table is gone).
GRANT SELECT, INSERT, DELETE ON simdup_tables TO PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION _simdup_tables_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner oid;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT c.relowner INTO owner FROM pg_class c WHERE c.oid = OLD.tbl;
        IF FOUND AND NOT pg_has_role(owner, 'USAGE') THEN
            RAISE EXCEPTION 'must be owner of table %', OLD.tbl USING ERRCODE = 'insufficient_privilege';
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT c.relowner INTO owner FROM pg_class c WHERE c.oid = NEW.tbl;
        IF NOT FOUND OR NOT pg_has_role(owner, 'USAGE') THEN
            RAISE EXCEPTION 'must be owner of table %', NEW.tbl USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END IF;
    RETURN OLD;
END
$$;
COMMENT ON FUNCTION _simdup_tables_guard() IS
  'simdup (internal): trigger letting only the owner of a table add or remove its simdup_tables row';

CREATE TRIGGER simdup_tables_guard BEFORE INSERT OR UPDATE OR DELETE ON simdup_tables
    FOR EACH ROW EXECUTE FUNCTION _simdup_tables_guard();

-- Runs a CREATE or DROP TRIGGER of the dedup trigger. Citus refuses trigger DDL on its
-- distributed tables unless citus.enable_unsafe_triggers is on: set here for this one command
-- and put back (the trigger on a shard only refuses writes that simdup_insert did not check,
-- src/citus/shard.rs). Without Citus, the command alone.
CREATE FUNCTION _simdup_trigger_ddl(command text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unsafe_triggers text := current_setting('citus.enable_unsafe_triggers', true);
BEGIN
    IF unsafe_triggers IS NULL THEN
        EXECUTE command;
        RETURN;
    END IF;
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    EXECUTE command;
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe_triggers, true);
END
$$;
COMMENT ON FUNCTION _simdup_trigger_ddl(text) IS
  'simdup (internal): runs a CREATE or DROP TRIGGER of the dedup trigger, with citus.enable_unsafe_triggers on for that command when Citus is loaded (it refuses trigger DDL on distributed tables otherwise)';

-- Dropping an equipped table, or its fingerprint column, forgets it.
CREATE FUNCTION _simdup_forget_dropped() RETURNS event_trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t oid;
BEGIN
    FOR t IN
        DELETE FROM @extschema@.simdup_tables s
        WHERE s.tbl::oid IN (SELECT o.objid FROM pg_event_trigger_dropped_objects() o
                             WHERE o.classid = 'pg_class'::regclass)
          AND NOT EXISTS (SELECT FROM pg_attribute a
                          WHERE a.attrelid = s.tbl AND a.attname = s.fingerprint_column
                            AND a.attnum > 0 AND NOT a.attisdropped)
        RETURNING s.tbl::oid
    LOOP
        -- The table is still there (its fingerprint column was dropped): its dedup trigger,
        -- which needs that column, goes too.
        IF EXISTS (SELECT FROM pg_trigger g WHERE g.tgrelid = t AND g.tgname = 'simdup_dedup') THEN
            PERFORM @extschema@._simdup_trigger_ddl(format('DROP TRIGGER simdup_dedup ON %s', t::regclass));
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION _simdup_forget_dropped() IS
  'simdup (internal): event trigger function removing the simdup_tables row of a dropped table or fingerprint column (and the dedup trigger of a table whose fingerprint column was dropped)';

CREATE EVENT TRIGGER simdup_forget_dropped ON sql_drop
    EXECUTE FUNCTION _simdup_forget_dropped();
COMMENT ON EVENT TRIGGER simdup_forget_dropped IS
  'simdup: forgets equipped tables (simdup_tables rows) when the table or its fingerprint column is dropped';
