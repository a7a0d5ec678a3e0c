-- +goose Up
-- Notes imported before 28f3c2f skipped the text rule: control characters
-- (ESC, BEL, U+0085, …) were stored and served raw in the feed and pages.
-- Every stored note now follows the rule a new one does (models.TextRule
-- with Multiline: line feeds and tabs stay, a CR LF becomes a line feed,
-- every other C0 or C1 control and DEL goes). PostgreSQL never took a NUL.
UPDATE bookings
SET note = regexp_replace(replace(note, E'\r\n', E'\n'), '[\x01-\x08\x0b-\x1f\x7f-\x9f]', '', 'g')
WHERE note ~ '[\x01-\x08\x0b-\x1f\x7f-\x9f]';

-- +goose Down
-- The characters removed are not kept: nothing to undo.
SELECT 1;
