-- SQLite equivalent of rsyslog's SystemEvents schema (ommysql/ompgsql
-- createDB.sql, as Debian ships it in mysql.sql / pgsql.sql next to this
-- file): same tables, same columns, same types as far as SQLite has them.
-- ID is AUTOINCREMENT so IDs only ever grow, as MySQL's and PostgreSQL's do:
-- the logviewer walks the primary key newest-first.
-- Datetimes are TEXT 'YYYY-MM-DD HH:MM:SS', as rsyslog's date-mysql writes them.
CREATE TABLE IF NOT EXISTS SystemEvents
(
        ID integer not null primary key autoincrement,
        CustomerID bigint,
        ReceivedAt datetime NULL,
        DeviceReportedTime datetime NULL,
        Facility smallint NULL,
        Priority smallint NULL,
        FromHost varchar(60) NULL,
        Message text,
        NTSeverity int NULL,
        Importance int NULL,
        EventSource varchar(60),
        EventUser varchar(60) NULL,
        EventCategory int NULL,
        EventID int NULL,
        EventBinaryData text NULL,
        MaxAvailable int NULL,
        CurrUsage int NULL,
        MinUsage int NULL,
        MaxUsage int NULL,
        InfoUnitID int NULL ,
        SysLogTag varchar(60),
        EventLogType varchar(60),
        GenericFileName VarChar(60),
        SystemID int NULL
);

CREATE TABLE IF NOT EXISTS SystemEventsProperties
(
        ID integer not null primary key autoincrement,
        SystemEventID int NULL ,
        ParamName varchar(255) NULL ,
        ParamValue text NULL
);
