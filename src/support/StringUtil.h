// String helpers shared by the CLI and the parsers: edit distance for "did you
// mean" suggestions, byte-size formatting, joining, and the one home of number
// parsing. Every parser of text that r3 reads from outside (options, campaign
// files, rules, protocols) reads numbers through parseInteger/parseDouble, so
// that a literal out of range is an error with a message, never an exception
// (std::stod throws out_of_range on "1e999" and on a few hundred digits) or a
// silent wrap-around (atoi, strtoul).
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace r3 {

/// Levenshtein distance between A and B.
size_t editDistance(std::string_view A, std::string_view B);

/// The candidate closest to Word, if it is close enough to be a likely typo
/// (distance at most a third of the word's length, and at least one).
std::optional<std::string>
closestMatch(std::string_view Word, const std::vector<std::string> &Candidates);

/// "1.5 GiB", "12.0 KiB", "17 B".
std::string formatBytes(uint64_t Bytes);

/// A share (0 to 1) as a percentage with one decimal: "12.3%".
std::string formatShare(double Share);

/// A factor such as a speedup: "1.57x" with Decimals decimals, or
/// "unbounded" when it is infinite (Amdahl's ceiling when the kernels are the
/// whole run).
std::string formatFactor(double Factor, int Decimals = 2);

/// Joins Parts with Sep.
std::string join(const std::vector<std::string> &Parts, std::string_view Sep);

/// The parts of Text between Sep characters (one empty part for "").
std::vector<std::string> split(std::string_view Text, char Sep);

/// Text without leading and trailing white space (blanks, tabs, CR, LF).
std::string trim(std::string_view Text);

/// Parses a non-negative decimal integer that fills the whole string.
std::optional<uint64_t> parseUnsigned(std::string_view Text);

/// Parses a decimal integer ("-12", "40") that fills the whole string and lies
/// in [Min, Max]. The error says what was expected and what was got, with long
/// text shortened: "expected an integer from 0 to 100, got '1234...' (300
/// characters)".
Expected<int64_t> parseInteger(std::string_view Text, int64_t Min, int64_t Max);

/// Parses a finite decimal number ("1.5", "-2e-3", "7") that fills the whole
/// string: no white space, no "inf", "nan" or hexadecimal. A value beyond a
/// double's range is an error ("out of range"); one too small to represent
/// reads as zero, as in C.
Expected<double> parseDouble(std::string_view Text);

/// Text as it goes into an error message: quoted, and cut to its first 24
/// characters with the length given when it is longer.
std::string quoteShort(std::string_view Text);

/// Parses a positive size: plain bytes, or with a binary unit K, M or G
/// ("4G", "512M", "64k"); none on anything else, zero, or overflow.
std::optional<uint64_t> parseSize(std::string_view Text);

/// C, C++ or CUDA text with comments, string and character literals
/// replaced by blanks (newlines kept, so that offsets and line numbers stay
/// right): what a scanner for definitions reads.
std::string blankedCode(const std::string &Text);

} // namespace r3
