// JUnit XML: exact text for the Sapphire Rapids H100 node of
// sample_results.hpp, then structure (counts match the test cases, outcome
// per status), escaping and well-formedness, read back by a strict XML
// reader (mini_xml.hpp; junit_check.py does the same with expat).
#include "report/junit.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <string>
#include <vector>

#include "report/hostile_results.hpp"
#include "report/mini_xml.hpp"
#include "report/sample_results.hpp"

namespace pcieval {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MiniXmlReader;
using ::testing::Not;
using ::testing::SizeIs;
using testing::XmlElement;

XmlElement read_xml(const std::string& text) {
  MiniXmlReader reader(text);
  auto root = reader.read();
  EXPECT_TRUE(root.has_value()) << reader.error() << "\n" << text;
  return root.value_or(XmlElement{});
}

// The verdict suite, and the probe suite when there is one.
std::vector<const XmlElement*> suites_of(const XmlElement& root) { return root.all("testsuite"); }

const XmlElement& only_suite(const XmlElement& root) {
  static const XmlElement kNone;
  const auto suites = root.all("testsuite");
  EXPECT_THAT(suites, SizeIs(1));
  return suites.empty() ? kNone : *suites.front();
}

// The counts CI systems show are the counts of what is inside, per suite and
// summed on <testsuites>.
void expect_counts_match(const XmlElement& root) {
  ASSERT_EQ(root.name, "testsuites");
  const auto suites = suites_of(root);
  ASSERT_THAT(suites, Not(IsEmpty()));
  ASSERT_LE(suites.size(), 2u);
  std::size_t total_tests = 0;
  int total_failures = 0;
  int total_errors = 0;
  for (const XmlElement* suite : suites) {
    int failures = 0;
    int errors = 0;
    int skipped = 0;
    const auto cases = suite->all("testcase");
    for (const XmlElement* test_case : cases) {
      EXPECT_TRUE(test_case->attribute("classname") && test_case->attribute("name"));
      std::size_t outcomes = 0;
      for (const XmlElement& child : test_case->children) {
        outcomes += child.name == "failure" || child.name == "error" || child.name == "skipped" ? 1 : 0;
      }
      EXPECT_LE(outcomes, 1u);
      failures += static_cast<int>(test_case->all("failure").size());
      errors += static_cast<int>(test_case->all("error").size());
      skipped += static_cast<int>(test_case->all("skipped").size());
    }
    EXPECT_EQ(suite->attribute("tests"), std::to_string(cases.size()));
    EXPECT_EQ(suite->attribute("failures"), std::to_string(failures));
    EXPECT_EQ(suite->attribute("errors"), std::to_string(errors));
    EXPECT_EQ(suite->attribute("skipped"), std::to_string(skipped));
    total_tests += cases.size();
    total_failures += failures;
    total_errors += errors;
  }
  EXPECT_EQ(root.attribute("tests"), std::to_string(total_tests));
  EXPECT_EQ(root.attribute("failures"), std::to_string(total_failures));
  EXPECT_EQ(root.attribute("errors"), std::to_string(total_errors));
}

TEST(JunitTest, ExactTextForTheSampleNode) {
  const std::string cls = R"(classname="pcieval.hgx-b07")";
  const std::string expected =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"pcieval burn-in\" tests=\"5\" failures=\"2\" errors=\"2\" time=\"0\">\n"
      "  <testsuite name=\"pcieval burn-in\" tests=\"5\" failures=\"2\" errors=\"2\" skipped=\"0\" time=\"0\" "
      "timestamp=\"2024-06-10T06:13:20\" hostname=\"hgx-b07\">\n"
      "    <properties>\n"
      "      <property name=\"pcieval.version\" value=\"0.1.0\"/>\n"
      "      <property name=\"kernel\" value=\"5.15.0-126-generic\"/>\n"
      "      <property name=\"overall\" value=\"fail\"/>\n"
      "      <property name=\"summary\" value=\"pcieval fail: 0000:17:00.0 link_downgraded "
      "(link_width_below_expected) +1 more\"/>\n"
      "    </properties>\n"
      "    <testcase " +
      cls +
      " name=\"0000:17:00.0 gpu\" time=\"0\">\n"
      "      <failure message=\"link 0000:17:00.0 &lt;-&gt; 0000:16:10.0 (device link) runs Gen1 x8, expected Gen5 "
      "x16\" type=\"link_downgraded\">remediation: Lanes are missing: reseat 0000:17:00.0\n"
      "code: link_width_below_expected\n"
      "link: 0000:17:00.0 &lt;-&gt; 0000:16:10.0\n"
      "</failure>\n"
      "    </testcase>\n"
      "    <testcase " +
      cls +
      " name=\"0000:18:00.0 nic\" time=\"0\"/>\n"
      "    <testcase " +
      cls +
      " name=\"0000:3b:00.0 nvme\" time=\"0\">\n"
      "      <error message=\"link 0000:3b:00.0 &lt;-&gt; 0000:3a:01.0 (device link) cannot be judged\" "
      "type=\"inconclusive\">remediation: Make sure sysfs is readable\n"
      "code: link_state_unknown\n"
      "link: 0000:3b:00.0 &lt;-&gt; 0000:3a:01.0\n"
      "</error>\n"
      "    </testcase>\n"
      "    <testcase " +
      cls +
      " name=\"0000:ca:00.0 gpu\" time=\"0\">\n"
      "      <error message=\"link 0000:ca:00.0 &lt;-&gt; 0000:c9:01.0 (device link) runs Gen1 x16, expected Gen5 x16 "
      "with no load applied\" type=\"inconclusive\">remediation: Read the link while the GPU is busy\n"
      "code: gpu_link_speed_idle\n"
      "link: 0000:ca:00.0 &lt;-&gt; 0000:c9:01.0\n"
      "</error>\n"
      "    </testcase>\n"
      "    <testcase " +
      cls +
      " name=\"node\" time=\"0\">\n"
      "      <failure message=\"found 2 GPUs, expected 4 (0000:17:00.0, 0000:ca:00.0)\" type=\"missing\">remediation: "
      "Compare `nvidia-smi -L` with the inventory\n"
      "code: gpus_missing\n"
      "</failure>\n"
      "    </testcase>\n"
      "  </testsuite>\n"
      "</testsuites>\n";
  EXPECT_EQ(render_junit(testing::hgx_spr_results(), "pcieval burn-in", 1718000000.25), expected);
}

TEST(JunitTest, SampleIsWellFormedAndCountsMatch) {
  const XmlElement root = read_xml(render_junit(testing::hgx_spr_results(), "pcieval"));
  expect_counts_match(root);
  EXPECT_EQ(root.attribute("tests"), "5");
}

TEST(JunitTest, EachStatusMapsToItsOutcome) {
  Results results = testing::hgx_spr_results();
  results.verdicts.clear();
  const std::vector<std::pair<VerdictStatus, std::string>> statuses = {
      {VerdictStatus::kPass, ""},
      {VerdictStatus::kLinkDowngraded, "failure"},
      {VerdictStatus::kBandwidthLow, "failure"},
      {VerdictStatus::kLinkErrors, "failure"},
      {VerdictStatus::kMissing, "failure"},
      {VerdictStatus::kInconclusive, "error"},
  };
  for (const auto& [status, outcome] : statuses) {
    results.verdicts.push_back({"0000:17:00.0", status, ReasonCode::kLinkStateUnknown, std::nullopt,
                                "reason " + std::string(to_string(status)), "do something"});
  }
  const XmlElement root = read_xml(render_junit(results, "pcieval"));
  expect_counts_match(root);
  const auto cases = only_suite(root).all("testcase");
  ASSERT_THAT(cases, SizeIs(statuses.size()));
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    const auto& [status, outcome] = statuses[i];
    if (outcome.empty()) {
      EXPECT_THAT(cases[i]->children, IsEmpty());
      continue;
    }
    ASSERT_THAT(cases[i]->children, SizeIs(1));
    const XmlElement& element = cases[i]->children.front();
    EXPECT_EQ(element.name, outcome);
    EXPECT_EQ(element.attribute("type"), std::string(to_string(status)));
    EXPECT_EQ(element.attribute("message"), "reason " + std::string(to_string(status)));
    EXPECT_EQ(element.text, "remediation: do something\ncode: link_state_unknown\n");
  }
  // One name per test case even for one device judged six times.
  EXPECT_EQ(cases[0]->attribute("name"), "0000:17:00.0 gpu");
  EXPECT_EQ(cases[1]->attribute("name"), "0000:17:00.0 gpu (2)");
  EXPECT_EQ(cases[5]->attribute("name"), "0000:17:00.0 gpu (6)");
}

TEST(JunitTest, NoVerdictsGiveAnEmptySuite) {
  const std::string text = render_junit(Results{}, "pcieval");
  const XmlElement root = read_xml(text);
  expect_counts_match(root);
  EXPECT_EQ(only_suite(root).attribute("tests"), "0");
  EXPECT_THAT(only_suite(root).all("testcase"), IsEmpty());
  // No hostname known: the attribute is left out and the class says so.
  EXPECT_EQ(only_suite(root).attribute("hostname"), std::nullopt);
  EXPECT_THAT(text, Not(HasSubstr("timestamp=")));
}

TEST(JunitTest, ClassNameKeepsTheHostOneLevelDeep) {
  Results results = testing::hgx_spr_results();
  results.evidence.host.hostname = "gpu01.cluster.example";
  const XmlElement root = read_xml(render_junit(results, "pcieval"));
  const XmlElement& suite = only_suite(root);
  EXPECT_EQ(suite.attribute("hostname"), "gpu01.cluster.example");
  for (const XmlElement* test_case : suite.all("testcase")) {
    EXPECT_EQ(test_case->attribute("classname"), "pcieval.gpu01_cluster_example");
  }
  results.evidence.host.hostname.clear();
  const XmlElement anonymous = read_xml(render_junit(results, "pcieval"));
  const auto cases = only_suite(anonymous).all("testcase");
  ASSERT_THAT(cases, SizeIs(5));
  EXPECT_EQ(cases.front()->attribute("classname"), "pcieval.unknown-host");
}

TEST(JunitTest, TimestampOnlyWhenItIsATime) {
  const Results results = testing::hgx_spr_results();
  EXPECT_THAT(render_junit(results, "p", 0.0), HasSubstr("timestamp=\"1970-01-01T00:00:00\""));
  EXPECT_THAT(render_junit(results, "p", 951782400.9), HasSubstr("timestamp=\"2000-02-29T00:00:00\""));
  for (const double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), -1.0, 1e300}) {
    EXPECT_THAT(render_junit(results, "p", bad), Not(HasSubstr("timestamp="))) << bad;
  }
}

TEST(JunitTest, TextIsEscapedAndForbiddenCharactersReplaced) {
  const std::string text = render_junit(testing::hostile_results(), "pcieval \"burn-in\" & <more>", 1718000000.0);
  const XmlElement root = read_xml(text);
  expect_counts_match(root);
  const XmlElement& suite = only_suite(root);
  EXPECT_EQ(suite.attribute("name"), "pcieval \"burn-in\" & <more>");
  EXPECT_EQ(suite.attribute("hostname"), "gpu01.rack\"7\".example&co");

  const auto cases = suite.all("testcase");
  ASSERT_THAT(cases, SizeIs(7));
  ASSERT_THAT(cases[0]->children, SizeIs(1));
  const std::string replacement = "\xef\xbf\xbd";
  const XmlElement& failure = cases[0]->children.front();
  // CR, LF and tab survive attribute normalisation as references; the C0
  // controls, the overlong '/' (two bytes) and U+FFFE become U+FFFD; DEL and
  // the emoji are allowed and kept.
  EXPECT_EQ(failure.attribute("message"), "<b>&amp; \"double\" 'single'\r\nnext\tline " + replacement + replacement +
                                              "\x7f " + replacement + replacement + " " + replacement +
                                              " ]]> \xf0\x9f\x98\x80");
  EXPECT_EQ(failure.text, "remediation: reseat & retrain\r\nthen <check>" + replacement +
                              "\ncode: link_width_below_expected\nlink: 0000:17:00.0 <-> 0000:16:10.0\n");

  // The subject that is no device: named as it is, made well-formed.
  EXPECT_EQ(cases[5]->attribute("name"),
            "dev \"q\" back\\slash\nline " + replacement + " " + replacement + " caf\xc3\xa9");
  EXPECT_EQ(cases[6]->attribute("name"), "0000:18:00.0 nic (2)");
}

TEST(JunitProbesTest, ExactProbesSuiteForTheProbedSample) {
  const std::string text = render_junit(testing::hgx_spr_results_probed(), "pcieval burn-in", 1718000000.25);
  const std::string cls = R"(classname="pcieval.hgx-b07")";
  const std::string expected =
      "  <testsuite name=\"probes\" tests=\"4\" failures=\"0\" errors=\"1\" skipped=\"1\" time=\"6.875\" "
      "timestamp=\"2024-06-10T06:13:20\" hostname=\"hgx-b07\">\n"
      "    <testcase " +
      cls +
      " name=\"probe h2d_ce\" time=\"1.750\">\n"
      "      <error message=\"GPU 0000:ca:00.0: cudaSetDevice: all CUDA-capable devices are busy or unavailable\" "
      "type=\"failed\">probe: h2d_ce\n"
      "reason: GPU 0000:ca:00.0: cudaSetDevice: all CUDA-capable devices are busy or unavailable\n"
      "</error>\n"
      "    </testcase>\n"
      "    <testcase " +
      cls +
      " name=\"probe sweep_ce\" time=\"4.500\"/>\n"
      "    <testcase " +
      cls +
      " name=\"probe group_ce\" time=\"0\">\n"
      "      <skipped message=\"no switch or root port is shared by two or more GPUs: each GPU&apos;s uplink carries "
      "only its own traffic\"/>\n"
      "    </testcase>\n"
      "    <testcase " +
      cls +
      " name=\"probe host_ceiling\" time=\"0.625\"/>\n"
      "  </testsuite>\n"
      "</testsuites>\n";
  ASSERT_GE(text.size(), expected.size());
  EXPECT_EQ(text.substr(text.size() - expected.size()), expected);
  EXPECT_THAT(text, HasSubstr("<testsuites name=\"pcieval burn-in\" tests=\"9\" failures=\"2\" errors=\"3\" "
                              "time=\"6.875\">\n"));
  // The verdict suite is as it was without probes.
  const std::string plain = render_junit(testing::hgx_spr_results(), "pcieval burn-in", 1718000000.25);
  const std::string verdict_suite = plain.substr(plain.find("  <testsuite "), plain.find("</testsuites>"));
  EXPECT_THAT(text, HasSubstr(verdict_suite.substr(0, verdict_suite.find("  </testsuite>"))));
}

TEST(JunitProbesTest, EachProbeStatusMapsToItsOutcome) {
  Results results = testing::hgx_spr_results_probed();
  results.evidence.probes = {
      {"a_ran", ProbeStatus::kRan, "", {}, 0.25},
      {"b_warned", ProbeStatus::kRan, "", {"latch timed out after 5 s"}, 1.0},
      {"c_skipped", ProbeStatus::kSkipped, "runs with --full only", {}, 0},
      {"d_failed", ProbeStatus::kFailed, "0000:17:00.0: data did not verify", {"retried"}, 2.0},
  };
  const XmlElement root = read_xml(render_junit(results, "pcieval"));
  expect_counts_match(root);
  const auto suites = suites_of(root);
  ASSERT_THAT(suites, SizeIs(2));
  EXPECT_EQ(suites[1]->attribute("name"), "probes");
  EXPECT_EQ(suites[1]->attribute("time"), "3.250");
  const auto cases = suites[1]->all("testcase");
  ASSERT_THAT(cases, SizeIs(4));
  EXPECT_EQ(cases[0]->attribute("name"), "probe a_ran");
  EXPECT_EQ(cases[0]->attribute("time"), "0.250");
  EXPECT_THAT(cases[0]->children, IsEmpty());
  ASSERT_THAT(cases[1]->children, SizeIs(1));
  EXPECT_EQ(cases[1]->children[0].name, "system-out");
  EXPECT_EQ(cases[1]->children[0].text, "probe: b_warned\nwarning: latch timed out after 5 s\n");
  ASSERT_THAT(cases[2]->children, SizeIs(1));
  EXPECT_EQ(cases[2]->children[0].name, "skipped");
  EXPECT_EQ(cases[2]->children[0].attribute("message"), "runs with --full only");
  ASSERT_THAT(cases[3]->children, SizeIs(1));
  const XmlElement& failure = cases[3]->children[0];
  EXPECT_EQ(failure.name, "error");
  EXPECT_EQ(failure.attribute("type"), "failed");
  EXPECT_EQ(failure.attribute("message"), "0000:17:00.0: data did not verify");
  EXPECT_EQ(failure.text, "probe: d_failed\nreason: 0000:17:00.0: data did not verify\nwarning: retried\n");
  for (const XmlElement* test_case : cases) {
    EXPECT_EQ(test_case->attribute("classname"), "pcieval.hgx-b07");
  }
}

TEST(JunitProbesTest, NoProbesNoProbesSuite) {
  const XmlElement root = read_xml(render_junit(testing::hgx_spr_results(), "pcieval"));
  EXPECT_THAT(suites_of(root), SizeIs(1));
  EXPECT_EQ(root.attribute("time"), "0");
}

TEST(JunitProbesTest, ProbeTextIsEscapedAndNamesStayDistinct) {
  Results results = testing::hostile_results();
  results.evidence.probes = {
      {"h2d_ce", ProbeStatus::kFailed, testing::kHostileReason, {testing::kHostileReason}, 1.0},
      {"h2d_ce", ProbeStatus::kSkipped, testing::kHostileReason, {}, 0},
  };
  // A verdict whose subject reads like a probe's test case.
  results.verdicts.push_back(
      {"probe h2d_ce", VerdictStatus::kPass, ReasonCode::kLinkAtExpectedState, std::nullopt, "", ""});
  const XmlElement root = read_xml(render_junit(results, "pcieval"));
  expect_counts_match(root);
  const auto cases = suites_of(root).back()->all("testcase");
  ASSERT_THAT(cases, SizeIs(2));
  EXPECT_EQ(cases[0]->attribute("name"), "probe h2d_ce (2)");
  EXPECT_EQ(cases[1]->attribute("name"), "probe h2d_ce (3)");
  const std::string replacement = "\xef\xbf\xbd";
  const std::string message = "<b>&amp; \"double\" 'single'\r\nnext\tline " + replacement + replacement + "\x7f " +
                              replacement + replacement + " " + replacement + " ]]> \xf0\x9f\x98\x80";
  ASSERT_THAT(cases[0]->children, SizeIs(1));
  EXPECT_EQ(cases[0]->children[0].attribute("message"), message);
  ASSERT_THAT(cases[1]->children, SizeIs(1));
  EXPECT_EQ(cases[1]->children[0].attribute("message"), message);
}

// The names as they have always been: the first of "x", "x (2)", "x (3)", ...
// that no earlier name took. The quadratic search itself, as the oracle.
std::vector<std::string> names_by_search(const std::vector<std::string>& bases) {
  std::set<std::string> taken;
  std::vector<std::string> out;
  for (const std::string& base : bases) {
    std::string name = base;
    for (int n = 2; !taken.insert(name).second; ++n) name = base + " (" + std::to_string(n) + ")";
    out.push_back(name);
  }
  return out;
}

std::vector<std::string> names_taken(const std::vector<std::string>& bases) {
  UniqueCaseNames names;
  std::vector<std::string> out;
  for (const std::string& base : bases) out.push_back(names.take(base));
  return out;
}

TEST(JunitCaseNamesTest, RepeatsAreNumberedFromTwoAndLiteralNumberedNamesNeverCollide) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(names_taken({"x", "x", "x"}), (Names{"x", "x (2)", "x (3)"}));
  // A subject that really is "x (2)" keeps its name; the repeats of "x" skip it.
  EXPECT_EQ(names_taken({"x (2)", "x", "x", "x"}), (Names{"x (2)", "x", "x (3)", "x (4)"}));
  // ... and when it comes after "x (2)" was handed out, it is numbered itself.
  EXPECT_EQ(names_taken({"x", "x", "x (2)", "x (2)", "x"}), (Names{"x", "x (2)", "x (2) (2)", "x (2) (3)", "x (3)"}));
  EXPECT_EQ(names_taken({"x (3)", "x", "x", "x", "x"}), (Names{"x (3)", "x", "x (2)", "x (4)", "x (5)"}));
  EXPECT_EQ(names_taken({"", "", "y"}), (Names{"", " (2)", "y"}));
}

TEST(JunitCaseNamesTest, SameNamesAsTheSearchOnMixedBases) {
  // Bases drawn from a few that collide with each other's numbered forms.
  const std::vector<std::string> pool = {"a", "a (2)", "a (3)", "a (2) (2)", "b", "a (10)", "a (2) (3)"};
  std::vector<std::string> bases;
  unsigned state = 12345;
  for (int i = 0; i < 2000; ++i) {
    state = state * 1103515245u + 12345u;
    bases.push_back(pool[(state >> 16) % pool.size()]);
  }
  EXPECT_EQ(names_taken(bases), names_by_search(bases));
}

TEST(JunitCaseNamesTest, WorkIsLinearInTheNamesTaken) {
  // 2,000 verdicts on one subject: the search tried 2,001,000 names; a name
  // is found taken at most twice (as itself and as a numbered form of its
  // base), so the tries are at most three per name.
  constexpr std::size_t kCount = 2000;
  UniqueCaseNames same;
  for (std::size_t i = 0; i < kCount; ++i) (void)same.take("0000:17:00.0 gpu");
  EXPECT_LE(same.tries(), 2 * kCount);

  // Literal numbered names in the way cost one extra try each, not a rescan.
  UniqueCaseNames mixed;
  for (std::size_t i = 0; i < kCount; ++i) (void)mixed.take("x (" + std::to_string(2 * i + 2) + ")");
  for (std::size_t i = 0; i < kCount; ++i) (void)mixed.take("x");
  EXPECT_LE(mixed.tries(), 3 * kCount);
}

TEST(JunitTest, ReaderRejectsWhatIsNotWellFormed) {
  // The checks above are only as good as the reader: it must refuse these.
  for (const char* bad : {
           "<a><b></a></b>",
           "<a x=\"1\" x=\"2\"/>",
           "<a x=\"<\"/>",
           "<a>&nbsp;</a>",
           "<a>& </a>",
           "<a>\x01</a>",
           "<a>\xff</a>",
           "<a>&#1;</a>",
           "<a>]]></a>",
           "<a/><b/>",
           "<a x=1/>",
       }) {
    MiniXmlReader reader(bad);
    EXPECT_FALSE(reader.read().has_value()) << bad;
  }
}

}  // namespace
}  // namespace pcieval
