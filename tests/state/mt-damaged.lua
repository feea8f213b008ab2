-- Messages to a daemon already running on WORK/milter.sock (damaged.sh
-- starts it over a damaged state): COUNT distinct messages, each a
-- variant of the test messages with its own Subject, sender and a
-- paragraph naming files and functions of the imported tree, so that
-- every one is looked up in and recorded to the state. Prints
-- "answered N of COUNT"; a daemon that dies ends the script with an error.
-- miltertest -D: WORK, MSGS (tests/milter/msgs), COUNT.
local lib = dofile(MSGS .. "/../lib.lua")
-- Messages the daemon passes with short headers: miltertest overflows its
-- stack on the long X-Slop-Report of a slop-scored one.
local kinds = { "genuine-patch.eml", "short-report.eml" }
local answered = 0
local count = tonumber(COUNT)
for i = 1, count do
    local path = MSGS .. "/" .. kinds[(i % #kinds) + 1]
    local _, body = lib.read_message(path)
    local extra = string.format("Seen in f%d.c: handler_%d() and helper_%d_x() return LIMIT_%d.\r\n",
        (i * 37) % 3000, (i * 91) % 3000, (i * 53) % 3000, i)
    -- A connection each: a message the daemon rejects ends its session.
    local conn = lib.connect()
    local r = lib.send(conn, path, {
        qid = "DMG" .. i,
        from = string.format("sender%d@example.test", i % 7),
        subject = "damaged state, message " .. i,
        body = extra .. body,
    })
    if r == SMFIR_ACCEPT or r == SMFIR_CONTINUE or r == SMFIR_REPLYCODE or r == SMFIR_TEMPFAIL then
        answered = answered + 1
    end
    mt.disconnect(conn)
end
mt.echo(string.format("answered %d of %d", answered, count))
