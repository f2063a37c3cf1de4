import { SQLDialect } from '@codemirror/lang-sql';

/**
 * ClickHouse's SQL for the editor: its keywords, types and common functions (lang-sql has no
 * ClickHouse dialect of its own). Backquotes and double quotes quote identifiers; `#` and `--`
 * start comments, as in ClickHouse.
 */
export const ClickHouse = SQLDialect.define({
  keywords:
    'select from where prewhere group by order having limit offset with totals rollup cube as and or not in is null like ilike between case when then else end ' +
    'distinct on join inner left right full outer cross semi anti any all asof global using array union intersect except exists interval ' +
    'asc desc nulls first last fill step to settings format sample final cast over partition rows range unbounded preceding following current row window qualify true false',
  types:
    'uint8 uint16 uint32 uint64 uint128 uint256 int8 int16 int32 int64 int128 int256 float32 float64 decimal decimal32 decimal64 decimal128 bool boolean string fixedstring uuid ' +
    'date date32 datetime datetime64 enum8 enum16 array tuple map nullable lowcardinality ipv4 ipv6 json nothing interval',
  builtin:
    'count countif sum sumif avg avgif min max any anylast argmin argmax uniq uniqexact uniqcombined quantile quantiles median topk groupArray groupuniqarray ' +
    'jsonextract jsonextractstring jsonextractint jsonextractuint jsonextractfloat jsonextractbool jsonextractraw jsonextractkeys jsonhas jsonlength ' +
    'tostartofminute tostartoffiveminutes tostartofhour tostartofday tostartofweek tostartofmonth tostartofyear tostartofinterval todate todatetime todatetime64 ' +
    'now now64 today yesterday datediff dateadd datesub formatdatetime parsedatetimebesteffort totimezone tounixtimestamp fromunixtimestamp ' +
    'tostring touint64 toint64 tofloat64 todecimal64 if multiif coalesce ifnull nullif length lower upper substring concat replaceall splitbychar ' +
    'arrayjoin has hasany arraymap arrayfilter round floor ceil abs greatest least',
  identifierQuotes: '`"',
  hashComments: true,
  backslashEscapes: true,
  caseInsensitiveIdentifiers: true,
});
