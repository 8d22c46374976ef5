// String helpers shared by the CLI and the parsers: edit distance for "did you
// mean" suggestions, byte-size formatting, joining.
#pragma once

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

/// Joins Parts with Sep.
std::string join(const std::vector<std::string> &Parts, std::string_view Sep);

/// The parts of Text between Sep characters (one empty part for "").
std::vector<std::string> split(std::string_view Text, char Sep);

/// Text without leading and trailing white space (blanks, tabs, CR, LF).
std::string trim(std::string_view Text);

/// Parses a non-negative decimal integer that fills the whole string.
std::optional<uint64_t> parseUnsigned(std::string_view Text);

/// Parses a positive size: plain bytes, or with a binary unit K, M or G
/// ("4G", "512M", "64k"); none on anything else, zero, or overflow.
std::optional<uint64_t> parseSize(std::string_view Text);

} // namespace r3
