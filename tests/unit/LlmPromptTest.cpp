// Prompt templates: placeholders and sections render as documented, a
// misspelt or unbalanced tag is refused with its line, and the templates
// r3 installs parse and mention every fact the campaign gives them.
#include "Catch.h"

#include "search/llm/Prompt.h"

using namespace r3;
using namespace r3::llm;

namespace {
PromptTemplate parsed(const std::string &Text) {
  auto T = PromptTemplate::parse(Text, "t.txt");
  INFO((T ? std::string() : T.error().message()));
  REQUIRE(T);
  return std::move(*T);
}

std::string refused(const std::string &Text) {
  auto T = PromptTemplate::parse(Text, "t.txt");
  REQUIRE_FALSE(T);
  return T.error().message();
}
} // namespace

TEST_CASE("prompt templates: values and sections", "[llm]") {
  PromptTemplate T = parsed("Speed up {{kernel}}.\n"
                            "{{#failures}}\nFailed before:\n{{failures}}"
                            "{{/failures}}\nDone.\n");
  CHECK(T.render({{"kernel", "matmul"}}) == "Speed up matmul.\nDone.\n");
  CHECK(T.render({{"kernel", "matmul"}, {"failures", "- timeout\n"}}) ==
        "Speed up matmul.\nFailed before:\n- timeout\nDone.\n");
  // Nested: an empty outer section drops the inner one too.
  PromptTemplate N = parsed("{{#best}}B{{#failures}}F{{/failures}}{{/best}}.");
  CHECK(N.render({{"failures", "x"}}) == ".");
  CHECK(N.render({{"best", "x"}}) == "B.");
  CHECK(N.render({{"best", "x"}, {"failures", "y"}}) == "BF.");
}

TEST_CASE("prompt templates: mistakes are refused with their line", "[llm]") {
  CHECK(refused("a\n{{kernal}}")
            .starts_with("t.txt:2: unknown placeholder '{{kernal}}'; known: "
                         "kernel, language"));
  CHECK(refused("{{#best}}x") == "t.txt: '{{#best}}' is never closed");
  CHECK(refused("x\n\n{{/best}}") ==
        "t.txt:3: '{{/best}}' closes no open '{{#best}}'");
  CHECK(refused("{{kernel") == "t.txt:1: '{{' is not closed");
}

TEST_CASE("prompt templates: the installed ones", "[llm]") {
  auto P = loadPrompts(std::string(R3_TEST_SHARE) + "/prompts");
  INFO((P ? std::string() : P.error().message()));
  REQUIRE(P);
  std::map<std::string, std::string> V;
  for (const auto &[Name, What] : promptVariables())
    V[Name] = "<" + Name + ">";
  std::string User = P->User.render(V);
  // Every fact a campaign gives reaches the model.
  for (const auto &[Name, What] : promptVariables())
    CHECK(User.find("<" + Name + ">") != std::string::npos);
  CHECK(User.find("<<<<<<< SEARCH") != std::string::npos);
  CHECK_FALSE(P->System.render(V).empty());
  CHECK(loadPrompts("/nonexistent").error().message() ==
        "/nonexistent/system.txt: cannot read the prompt template: No such "
        "file or directory");
}
