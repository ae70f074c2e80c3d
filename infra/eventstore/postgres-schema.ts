import type { Migration } from '../db.ts';

// One events table. The global order is (transaction_id, position): a reader only sees rows
// whose transaction id is below the xmin of its snapshot, so every transaction that could still
// add a row before its checkpoint has finished, and a late commit can never be skipped.
// The primary key doubles as the index every global read scans.
export const eventStoreMigrations: Migration[] = [
  {
    id: 'eventstore/001-events',
    sql: `
      CREATE TABLE events (
        position       bigint GENERATED ALWAYS AS IDENTITY,
        transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
        stream_name    text NOT NULL,
        revision       bigint NOT NULL,
        event_id       uuid NOT NULL,
        event_type     text NOT NULL,
        data           jsonb NOT NULL,
        metadata       jsonb NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (transaction_id, position),
        CONSTRAINT events_stream_revision UNIQUE (stream_name, revision)
      );

      -- One round trip and one transaction per append: check the expected revision, insert
      -- the events with consecutive revisions. A concurrent writer that passed the same check
      -- loses on the unique (stream_name, revision) constraint.
      CREATE FUNCTION append_events(
        p_stream text, p_mode text, p_expected bigint,
        p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[])
      RETURNS TABLE (next_revision bigint, transaction_id text, last_position bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_current bigint;
      BEGIN
        SELECT e.revision INTO v_current FROM events e
          WHERE e.stream_name = p_stream ORDER BY e.revision DESC LIMIT 1;
        v_current := coalesce(v_current, -1);
        IF (p_mode = 'exact' AND v_current <> p_expected)
           OR (p_mode = 'no_stream' AND v_current <> -1)
           OR (p_mode = 'stream_exists' AND v_current = -1) THEN
          RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'wrong_expected_revision', DETAIL = v_current::text;
        END IF;
        RETURN QUERY
          WITH inserted AS (
            INSERT INTO events (stream_name, revision, event_id, event_type, data, metadata)
            SELECT p_stream, v_current + n.ord, n.id, n.type, n.data, n.meta
              FROM unnest(p_ids, p_types, p_data, p_metadata) WITH ORDINALITY AS n(id, type, data, meta, ord)
              ORDER BY n.ord
            RETURNING events.revision, events.transaction_id, events.position)
          SELECT max(i.revision), max(i.transaction_id)::text, max(i.position) FROM inserted i;
      END $$;
    `,
  },
  {
    id: 'eventstore/002-append-batch',
    sql: `
      -- Several independent appends in one transaction and one commit (group commit): each item
      -- is checked against its own expected revision and written all or nothing, and an item
      -- that fails reports the stream's actual revision while the others are written. Items
      -- arrive sorted by stream name, so two batches never wait on each other in a cycle.
      -- A concurrent writer's uncommitted revision is waited for (ON CONFLICT), then counted as
      -- a conflict; this item's rows already written are removed again, nothing is raised.
      CREATE FUNCTION append_batch(
        p_streams text[], p_modes text[], p_expected bigint[], p_counts int[],
        p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[])
      RETURNS TABLE (item int, next_revision bigint, transaction_id text, last_position bigint, actual_revision bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_offset int := 0;
        v_current bigint;
        v_count int;
        v_inserted int;
        v_last bigint;
      BEGIN
        FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
          v_count := p_counts[i];
          SELECT e.revision INTO v_current FROM events e
            WHERE e.stream_name = p_streams[i] ORDER BY e.revision DESC LIMIT 1;
          v_current := coalesce(v_current, -1);
          item := i;
          IF (p_modes[i] = 'exact' AND v_current <> p_expected[i])
             OR (p_modes[i] = 'no_stream' AND v_current <> -1)
             OR (p_modes[i] = 'stream_exists' AND v_current = -1) THEN
            next_revision := NULL; transaction_id := NULL; last_position := NULL; actual_revision := v_current;
          ELSE
            WITH inserted AS (
              INSERT INTO events (stream_name, revision, event_id, event_type, data, metadata)
              SELECT p_streams[i], v_current + n.ord, n.id, n.type, n.data, n.meta
                FROM unnest(p_ids[v_offset + 1 : v_offset + v_count], p_types[v_offset + 1 : v_offset + v_count],
                            p_data[v_offset + 1 : v_offset + v_count], p_metadata[v_offset + 1 : v_offset + v_count])
                     WITH ORDINALITY AS n(id, type, data, meta, ord)
                ORDER BY n.ord
              ON CONFLICT ON CONSTRAINT events_stream_revision DO NOTHING
              RETURNING events.position)
            SELECT count(*), max(inserted.position) INTO v_inserted, v_last FROM inserted;
            IF v_inserted < v_count THEN
              DELETE FROM events e
                WHERE e.stream_name = p_streams[i] AND e.revision > v_current AND e.transaction_id = pg_current_xact_id();
              SELECT e.revision INTO v_current FROM events e
                WHERE e.stream_name = p_streams[i] ORDER BY e.revision DESC LIMIT 1;
              next_revision := NULL; transaction_id := NULL; last_position := NULL; actual_revision := coalesce(v_current, -1);
            ELSE
              next_revision := v_current + v_count; transaction_id := pg_current_xact_id()::text;
              last_position := v_last; actual_revision := NULL;
            END IF;
          END IF;
          RETURN NEXT;
          v_offset := v_offset + v_count;
        END LOOP;
      END $$;
    `,
  },
];
