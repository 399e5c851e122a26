//===- InputLimits.cpp - bound what MLIR's recursive parser gets ----------===//
//
// MLIR's parser (and the attribute and type storage behind it) recurses once
// per nested bracket and once per operator of an affine expression, with
// nothing to stop it before the stack runs out: tens of thousands of `[`, or
// an affine map summing a hundred thousand terms, end in SIGSEGV. The tools
// and the fuzz targets scan the text first and refuse such input with a
// located error; the bounds are far above anything a frontend writes and far
// below the depth where the parser's stack runs out. The scan also refuses
// the one malformed form found (by fuzzing) to crash LLVM 22's parser: the
// integer list of linalg.transpose, broadcast and reduce.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {
/// The scan's position and what it has seen.
class NestingScanner {
public:
  explicit NestingScanner(StringRef text) : text(text) {}

  std::optional<attn::InputLimitViolation> scan() {
    while (pos < text.size()) {
      char c = text[pos];
      if (c == '"') {
        skipString();
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        skipLine();
        continue;
      }
      if (llvm::isAlpha(c) || c == '_') {
        if (auto violation = scanWord())
          return violation;
        continue;
      }
      if (c == '\n' && depth <= arrayOpDepth && !continuesStatement())
        arrayOpDepth = -1;
      if (auto violation = scanPunctuation(c))
        return violation;
      ++pos;
    }
    return std::nullopt;
  }

private:
  char peek(size_t ahead) const {
    return pos + ahead < text.size() ? text[pos + ahead] : '\0';
  }

  void skipString() {
    for (++pos; pos < text.size() && text[pos] != '"'; ++pos)
      if (text[pos] == '\\')
        ++pos;
    ++pos;
  }

  void skipLine() {
    size_t end = text.find('\n', pos);
    pos = end == StringRef::npos ? text.size() : end + 1;
  }

  /// An identifier; `affine_map<` and `affine_set<` start counting
  /// operators, as do their keyword operators inside one.
  std::optional<attn::InputLimitViolation> scanWord() {
    size_t start = pos;
    while (pos < text.size() &&
           (llvm::isAlnum(text[pos]) || text[pos] == '_' || text[pos] == '.'))
      ++pos;
    StringRef word = text.slice(start, pos);
    if (word == "linalg.transpose" || word == "linalg.broadcast" ||
        word == "linalg.reduce") {
      arrayOpDepth = depth;
      return std::nullopt;
    }
    if (arrayOpDepth >= 0 && (word == "permutation" || word == "dimensions")) {
      arrayOpDepth = -1;
      return checkIntegerArray(start, word);
    }
    if ((word == "affine_map" || word == "affine_set") && peek(0) == '<' &&
        affineDepth < 0) {
      affineDepth = depth;
      affineOperators = 0;
    } else if (affineDepth >= 0 &&
               (word == "mod" || word == "floordiv" || word == "ceildiv")) {
      return countAffineOperator(start);
    }
    return std::nullopt;
  }

  /// After a line break: the next line goes on with a keyword (`outs`,
  /// `dimensions`, ...) rather than starting a statement (`%r =`, `}`).
  bool continuesStatement() const {
    size_t next = pos + 1;
    while (next < text.size() && llvm::isSpace(text[next]))
      ++next;
    return next < text.size() && llvm::isAlpha(text[next]);
  }

  /// Skips what MLIR's lexer skips between tokens: spaces, tabs, line breaks
  /// and `//` comments. Not `llvm::isSpace`'s form feed and vertical tab:
  /// the lexer rejects those, and the integer list must be one the parser
  /// reads to the end.
  void skipSpaces() {
    while (pos < text.size()) {
      char c = text[pos];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        ++pos;
      else if (c == '/' && peek(1) == '/')
        skipLine();
      else
        return;
    }
  }

  /// After `permutation =` or `dimensions =` of linalg.transpose, broadcast
  /// and reduce in their custom form: a list of integers in brackets. LLVM
  /// 22's parser of these ops dereferences a null attribute when anything
  /// else follows the `=` (a crash, after its own error message).
  std::optional<attn::InputLimitViolation> checkIntegerArray(size_t at,
                                                             StringRef word) {
    size_t resume = pos;
    skipSpaces();
    if (peek(0) != '=') {
      pos = resume;
      return std::nullopt;
    }
    ++pos;
    skipSpaces();
    bool ok = peek(0) == '[';
    if (ok) {
      ++pos;
      skipSpaces();
      bool first = true;
      while (ok && peek(0) != ']') {
        if (!first) {
          ok = peek(0) == ',';
          ++pos;
          skipSpaces();
        }
        if (peek(0) == '-')
          ++pos;
        ok = ok && llvm::isDigit(peek(0));
        while (llvm::isDigit(peek(0)))
          ++pos;
        skipSpaces();
        first = false;
      }
    }
    pos = resume;
    if (ok)
      return std::nullopt;
    return attn::InputLimitViolation{
        at, "expected a list of integers in brackets after '" + word.str() +
                " =' (LLVM's parser of this linalg op fails on anything "
                "else)"};
  }

  std::optional<attn::InputLimitViolation> countAffineOperator(size_t at) {
    if (++affineOperators <= attn::kMaxAffineOperators)
      return std::nullopt;
    return attn::InputLimitViolation{
        at, "affine expression with more than " +
                std::to_string(attn::kMaxAffineOperators) +
                " operators: the parser recurses once per operator"};
  }

  std::optional<attn::InputLimitViolation> scanPunctuation(char c) {
    bool opens = c == '(' || c == '[' || c == '{' || (c == '<' && peek(1) != '=');
    // `->` and `>=` (affine constraints) close nothing.
    bool closes = c == ')' || c == ']' || c == '}' ||
                  (c == '>' && peek(1) != '=' &&
                   (pos == 0 || text[pos - 1] != '-'));
    if (opens && ++depth > attn::kMaxNestingDepth)
      return attn::InputLimitViolation{
          pos, "nesting deeper than " +
                   std::to_string(attn::kMaxNestingDepth) +
                   " brackets (regions, attributes, types): the parser "
                   "recurses once per level"};
    if (closes && depth > 0 && --depth == affineDepth)
      affineDepth = -1;
    if (affineDepth >= 0 && (c == '+' || c == '*' || (c == '-' && peek(1) != '>')))
      return countAffineOperator(pos);
    return std::nullopt;
  }

  StringRef text;
  size_t pos = 0;
  int64_t depth = 0;
  /// The depth outside the affine map being scanned, -1 outside any.
  int64_t affineDepth = -1;
  int64_t affineOperators = 0;
  /// The depth of a linalg.transpose, broadcast or reduce in custom form
  /// whose integer list is still to come (until a line starts another
  /// statement), -1 if none.
  int64_t arrayOpDepth = -1;
};
} // namespace

std::optional<attn::InputLimitViolation>
attn::findInputLimitViolation(StringRef text) {
  return NestingScanner(text).scan();
}

LogicalResult attn::checkInputLimits(llvm::SourceMgr &sourceMgr,
                                     unsigned bufferId) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  std::optional<InputLimitViolation> violation =
      findInputLimitViolation(buffer->getBuffer());
  if (!violation)
    return success();
  llvm::SMLoc loc = llvm::SMLoc::getFromPointer(buffer->getBufferStart() +
                                                violation->offset);
  // Such input tends to be one enormous line: show its position only.
  auto [line, column] = sourceMgr.getLineAndColumn(loc, bufferId);
  if (column <= 160) {
    sourceMgr.PrintMessage(llvm::errs(), loc, llvm::SourceMgr::DK_Error,
                           violation->message);
    return failure();
  }
  llvm::errs() << buffer->getBufferIdentifier() << ":" << line << ":" << column
               << ": error: " << violation->message << "\n";
  return failure();
}
