// reportgen: tables with the class `reportgen-sortable` (reportgen/render/markup.py: SORTABLE) sort by a
// column when its header is clicked (numbers as numbers) and get a box above them that filters their rows.
(function () {
  "use strict";
  if (window.reportgenTables) return; // listed twice (a site's conf.py and the extension): set up once
  window.reportgenTables = true;

  function number(text) {
    return /^[-+]?\d/.test(text) ? parseFloat(text.replace(/[^\d.eE+-]/g, "")) : NaN;
  }

  function compare(a, b) {
    const x = number(a), y = number(b);
    if (!isNaN(x) && !isNaN(y)) return x - y;
    if (!isNaN(x) || !isNaN(y)) return isNaN(x) ? 1 : -1;
    return a.localeCompare(b);
  }

  function sortBy(table, column, header) {
    const body = table.tBodies[0];
    const ascending = header.getAttribute("aria-sort") !== "ascending";
    const text = (row) => (row.cells[column] ? row.cells[column].textContent.trim() : "");
    const rows = Array.from(body.rows).sort((a, b) => compare(text(a), text(b)) * (ascending ? 1 : -1));
    for (const cell of header.parentElement.cells) cell.removeAttribute("aria-sort");
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    for (const row of rows) body.appendChild(row);
  }

  function filter(table, query) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    for (const row of table.tBodies[0].rows) {
      const text = row.textContent.toLowerCase();
      row.hidden = !words.every((word) => text.includes(word));
    }
  }

  function setUp(table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.from(table.tHead.rows[0].cells).forEach((header, column) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "reportgen-sort";
      button.title = "Sort by this column";
      while (header.firstChild) button.appendChild(header.firstChild);
      header.appendChild(button);
      button.addEventListener("click", () => sortBy(table, column, header));
    });
    const input = document.createElement("input");
    input.type = "search";
    input.className = "reportgen-filter";
    input.placeholder = `Filter ${table.tBodies[0].rows.length} rows`;
    input.setAttribute("aria-label", "Filter the rows of the table below");
    input.addEventListener("input", () => filter(table, input.value));
    const wrapper = table.closest(".table-wrapper") || table;
    wrapper.parentNode.insertBefore(input, wrapper);
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("table.reportgen-sortable").forEach(setUp);
  });
})();
