#include "credentials.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <strings.h>

namespace stowage_s3 {
namespace {

using Section = std::map<std::string, std::string>;
using Ini = std::map<std::string, Section>;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// The AWS CLI's INI files: [section], key = value, # and ; comments.
// Indented lines belong to a nested block ("s3 =\n  addressing_style = path")
// that this reader does not take.
Ini read_ini(const std::string& path) {
  Ini ini;
  std::ifstream in(path);
  std::string line, section;
  bool have_section = false;
  while (std::getline(in, line)) {
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) continue;
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = trim(line.substr(1, line.size() - 2));
      have_section = true;
      ini[section];
      continue;
    }
    const size_t eq = line.find('=');
    if (!have_section || eq == std::string::npos) continue;
    ini[section][trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return ini;
}

std::string home_file(const char* variable, const char* name) {
  std::string path = env(variable);
  if (!path.empty()) {
    if (path.rfind("~/", 0) == 0) path = env("HOME") + path.substr(1);
    return path;
  }
  return env("HOME") + "/.aws/" + name;
}

bool is_yes(const std::string& v) {
  return strcasecmp(v.c_str(), "yes") == 0 || strcasecmp(v.c_str(), "true") == 0 || v == "1";
}

// The profile's section in each file (empty when absent); false if neither has it.
bool profile_sections(const std::string& profile, Section* credentials, Section* config) {
  const Ini c = read_ini(home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials"));
  const Ini f = read_ini(home_file("AWS_CONFIG_FILE", "config"));
  bool found = false;
  if (auto it = c.find(profile); it != c.end()) *credentials = it->second, found = true;
  auto it = f.find("profile " + profile);
  if (it == f.end() && profile == "default") it = f.find("default");
  if (it != f.end()) *config = it->second, found = true;
  return found;
}

std::string value(const Section& s, const char* key) {
  auto it = s.find(key);
  return it == s.end() ? "" : it->second;
}

// The key from one place: both halves, or neither.
bool take_key(const std::string& id, const std::string& secret, const std::string& token,
              const std::string& where, Config* out) {
  if (id.empty() && secret.empty()) return false;
  if (id.empty() || secret.empty())
    throw std::runtime_error("s3 storage: " + where + " has " +
                             (id.empty() ? "a secret access key but no access key id"
                                         : "an access key id but no secret access key"));
  out->credentials = Credentials{id, secret, token};
  out->credentials_from = where;
  return true;
}

}  // namespace

std::string aws_endpoint(const std::string& region) {
  return "https://s3." + region + ".amazonaws.com";
}

void use_key(const std::string& id, const std::string& secret, const std::string& token,
             const std::string& where, Config* c) {
  take_key(id, secret, token, where, c);
}

Config find_config(const std::string& profile) {
  Config c;
  c.profile = profile.empty() ? env("AWS_PROFILE") : profile;
  const bool named = !c.profile.empty();
  if (!named) c.profile = "default";
  Section creds, conf;
  if (!profile_sections(c.profile, &creds, &conf) && named)
    throw std::runtime_error(
        "s3 storage: " + (profile.empty() ? std::string("AWS_PROFILE") : "the option profile") +
        " names the profile \"" + c.profile + "\", which neither " +
        home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials") + " nor " +
        home_file("AWS_CONFIG_FILE", "config") + " has");

  if (!is_yes(env("AWS_NO_SIGN_REQUEST")) &&
      (!profile.empty() ||
       !take_key(env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"), env("AWS_SESSION_TOKEN"),
                 "the environment (AWS_ACCESS_KEY_ID)", &c)) &&
      !take_key(value(creds, "aws_access_key_id"), value(creds, "aws_secret_access_key"),
                value(creds, "aws_session_token"), "the credentials file's profile " + c.profile,
                &c))
    take_key(value(conf, "aws_access_key_id"), value(conf, "aws_secret_access_key"),
             value(conf, "aws_session_token"), "the config file's profile " + c.profile, &c);

  for (const std::string& r : {env("AWS_REGION"), env("AWS_DEFAULT_REGION"), value(conf, "region")})
    if (c.region.empty()) c.region = r;
  c.region_given = !c.region.empty();
  if (c.region.empty()) c.region = "us-east-1";

  for (const std::string& e :
       {env("AWS_ENDPOINT_URL_S3"), env("AWS_ENDPOINT_URL"), value(conf, "endpoint_url")})
    if (c.endpoint.empty()) c.endpoint = e;
  c.path_style = !c.endpoint.empty();
  if (c.endpoint.empty()) c.endpoint = aws_endpoint(c.region);
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
  return c;
}

}  // namespace stowage_s3
