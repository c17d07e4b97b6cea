// The book's search ranking (Sphinx's `html_search_scorer`, set in _config.yml). Sphinx appends this file to
// language_data.js, which loads after searchtools.js, so this `Scorer` replaces Sphinx's default one.
//
// A reader searching "Muon" or "weight decay" wants the chapters first and the API reference after them. With
// Sphinx's scores alone an API object whose name matches scores 11 + 5 = 16 and the API page itself 15 (its
// section titles name the modules), above a chapter that mentions the word (5) or even has it in its title (15).
// So every result on the API pages loses `apiPenalty`: an object or a title of it scores at most
// 11 + 15 - 30 = -4, below any result of another page (at least `partialTerm` = 2). Only an index entry that
// is most of the query (a full module name) can still come first. The order among the API page's results, and
// among the other pages', stays Sphinx's own; the other values are Sphinx 7's defaults.
var Scorer = {
  // the API reference (its first page's docname; one page per layer below it), and what each of its results loses
  apiPage: "book/api",
  apiPenalty: 30,
  isApi: (docname) => docname === Scorer.apiPage || docname.startsWith(Scorer.apiPage + "/"),
  // result: [docname, title, anchor, descr, score, filename]
  score: ([docname, , , , score]) => (Scorer.isApi(docname) ? score - Scorer.apiPenalty : score),

  // query matches the full name of an object, or the last dotted part of it
  objNameMatch: 11,
  objPartialMatch: 6,
  // added by the priority of the object
  objPrio: {
    0: 15,
    1: 5,
    2: -5,
  },
  objPrioDefault: 0,
  // query found in a page's title, or in its text (the whole word, or part of a word)
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
