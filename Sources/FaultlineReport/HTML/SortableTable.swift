/// A table whose rows sort by a column when its header is clicked: first click largest first, the next smallest
/// first. Numbers sort by their value (`data-v`), not their text ("2.1 ms" after "900 µs"). The page's one script
/// does it, inline; `#sort=TABLE:COLUMN` in the page's address (`:asc` for smallest first) sorts on opening.
struct SortableTable {
    enum Cell {
        /// HTML, escaped already.
        case html(String)
        /// A number shown as `display`, sorted by `value`.
        case number(String, Double)
    }

    let id: String
    let headers: [String]
    var rows: [[Cell]] = []
    /// A last row that is not sorted ("… 12 more"), escaped HTML.
    var footer: String?

    var html: String {
        var out = "<table class=sortable id=\"\(HTMLText.escape(id))\"><thead><tr>" + headers.map { "<th aria-sort=\"none\">\(HTMLText.escape($0))</th>" }.joined() + "</tr></thead><tbody>\n"
        for row in rows {
            out += "<tr>" + row.map { cell in
                switch cell {
                case .html(let html): return "<td>\(html)</td>"
                case .number(let display, let value): return "<td class=n data-v=\"\(value.isFinite ? "\(value)" : "0")\">\(display)</td>"
                }
            }.joined() + "</tr>\n"
        }
        out += "</tbody>"
        if let footer { out += "<tfoot><tr><td class=muted colspan=\(headers.count)>\(footer)</td></tr></tfoot>" }
        return out + "</table>\n"
    }

    static let script = """
    <script>
    (function () {
      function key(cell) { var v = cell.getAttribute('data-v'); return v === null ? cell.textContent.trim().toLowerCase() : parseFloat(v); }
      function sort(table, column, descending) {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) { var x = key(a.cells[column]), y = key(b.cells[column]); var c = x < y ? -1 : x > y ? 1 : 0; return descending ? -c : c; });
        rows.forEach(function (row) { body.appendChild(row); });
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
          th.setAttribute('aria-sort', i === column ? (descending ? 'descending' : 'ascending') : 'none');
        });
      }
      var tables = document.querySelectorAll('table.sortable');
      Array.prototype.forEach.call(tables, function (table) {
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
          th.addEventListener('click', function () { sort(table, i, th.getAttribute('aria-sort') !== 'descending'); });
        });
      });
      var wanted = /^#sort=([A-Za-z0-9_-]+):([0-9]+)(:asc)?$/.exec(location.hash);
      if (wanted) { var table = document.getElementById(wanted[1]); if (table && table.tHead) sort(table, +wanted[2], !wanted[3]); }
      document.documentElement.setAttribute('data-sortable-tables', String(tables.length));
    })();
    </script>
    """
}
