// A description's fill_value in JSON and back (dtype.cpp), for node descriptions and copy.
#pragma once

#include <stowage/stowage.hpp>

namespace stowage {

// A description's "fill_value" (a number, or Zarr's "NaN", "Infinity",
// "-Infinity", since JSON has none of them; anything else is 0), and back.
// A complex fill value is a pair [re, im] of those.
double fill_value_of(const json& j);
double fill_value_imag_of(const json& j);
json fill_value_json(double value);
json fill_value_json(double value, double imag, DType dtype);  // [re, im] for a complex dtype

}  // namespace stowage
