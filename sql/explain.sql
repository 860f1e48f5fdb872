-- simdup: why two texts are, or are not, near-duplicates (src/explain.rs; the passages:
-- core/src/explain.rs).
--
--   SELECT jsonb_pretty(simdup_explain('first text', 'second text'));          -- defaults
--   SELECT simdup_explain('first text', 'second text', 'docs') -> 'verdicts';  -- docs' trigger
--   SELECT simdup_explain_rows('docs', '1', '2');                              -- two stored rows
--   SELECT * FROM simdup_explain_passages('first text', 'second text');        -- rows for psql
--
-- The figures are simhash, hamming, jaccard and containment's; each verdict is reached by the
-- decision code of the dedup trigger it explains, with that trigger's arguments.

CREATE FUNCTION simdup_explain(a text, b text, tbl regclass DEFAULT NULL) RETURNS jsonb
LANGUAGE c STABLE PARALLEL SAFE COST 10000
AS 'MODULE_PATHNAME', 'simdup_explain_wrapper';
COMMENT ON FUNCTION simdup_explain(text, text, regclass) IS
  'simdup: why two texts are or are not near-duplicates, as jsonb: each text''s length, simhash and number of character k-shingles; hamming (NULL for a text without words), k, jaccard, containment (both NULL for a text without shingles), a_in_b and b_in_a (the share of each text''s shingles found in the other); verdicts: for each dedup trigger of tbl (simdup_dedup or simdup_dedup_similar, with its own arguments), or without tbl for the defaults of both, whether b inserted after a is a near-duplicate, what the trigger does with it, the rule that decided (distance, jaccard, containment, short_text) and why; alignment and passages: the runs both texts share and those only one has (CJK characters and words as units; side both, a or b), which reassemble each text exactly. NULL when a or b is NULL; 55000 for a table without a dedup trigger; 54000 for a text of more than 400000 units';

CREATE FUNCTION simdup_explain_passages(a text, b text)
RETURNS TABLE (ord integer, side text, passage text)
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE COST 10000 ROWS 20
AS 'MODULE_PATHNAME', 'simdup_explain_passages_wrapper';
COMMENT ON FUNCTION simdup_explain_passages(text, text) IS
  'simdup: the aligned passages of two texts, in order (ord): side both for a run both texts have, a or b for a run only one has (a changed run: its a passage, then its b passage). Units are CJK characters one by one and words, whitespace runs and other characters elsewhere, compared exactly; a shared run no longer than the changes on both sides of it is reported as changed. string_agg(passage, '''' ORDER BY ord) over sides both and a is a, over both and b is b. 54000 for a text of more than 400000 units';

-- The text and key columns of a table's dedup trigger, as its arguments name them.
CREATE FUNCTION _simdup_explain_columns(tbl regclass) RETURNS TABLE (text_column text, key_column text)
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_explain_columns_wrapper';
COMMENT ON FUNCTION _simdup_explain_columns(regclass) IS
  'simdup (internal): the text and key columns named by the arguments of a table''s dedup trigger (simdup_dedup or simdup_dedup_similar), for simdup_explain_rows; 55000 without a dedup trigger or for one on an adopted fingerprint column (no text)';

-- Two stored rows, read by their keys (as text: simdup_pairs reports them so) with an ordinary
-- query as the caller, so the caller's privileges and row-level security apply; then
-- simdup_explain of their texts with the table's dedup trigger.
CREATE FUNCTION simdup_explain_rows(tbl regclass, key_a text, key_b text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cols record;
    key_type regtype;
    texts text[] := '{}';
    keys text[] := ARRAY[key_a, key_b];
    body text;
    n bigint;
BEGIN
    IF tbl IS NULL OR key_a IS NULL OR key_b IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT c.text_column, c.key_column INTO cols FROM @extschema@._simdup_explain_columns(tbl) c;
    SELECT c.typ INTO key_type FROM @extschema@._simdup_column(tbl, cols.key_column) c;  -- 42703
    FOR i IN 1..2 LOOP
        EXECUTE format('SELECT %I::text FROM %s WHERE %I = CAST($1 AS %s)', cols.text_column, tbl, cols.key_column, key_type)
            INTO body USING keys[i];
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n = 0 THEN
            RAISE EXCEPTION 'table % has no row with % = %', tbl, quote_ident(cols.key_column), keys[i]
                USING ERRCODE = 'no_data_found',
                      HINT = 'Or no row the current role may see (row-level security).';
        END IF;
        texts := texts || body;
    END LOOP;
    RETURN @extschema@.simdup_explain(texts[1], texts[2], tbl)
           || jsonb_build_object('keys', jsonb_build_object('a', key_a, 'b', key_b));
END
$$;
COMMENT ON FUNCTION simdup_explain_rows(regclass, text, text) IS
  'simdup: simdup_explain of the texts of two stored rows of a table with a dedup trigger, found by their keys (the primary key as text, as simdup_pairs reports it), with the table''s trigger settings; b is judged as inserted after a. Reads the rows with an ordinary query as the caller (SELECT privilege and row-level security apply); P0002 when a key has no row the caller may see; NULL when a text is NULL';
