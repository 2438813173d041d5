// Where the s3 backend finds credentials, region and endpoint
// (plugins/storage/s3/credentials.hpp): the AWS CLI's rules, over a
// temporary environment and temporary ~/.aws files.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "../../plugins/storage/s3/credentials.hpp"
#include "test_support.hpp"

namespace {

const char* const kVariables[] = {
    "AWS_ACCESS_KEY_ID",           "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",   "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",       "AWS_NO_SIGN_REQUEST", "AWS_REGION",
    "AWS_DEFAULT_REGION",          "AWS_ENDPOINT_URL",      "AWS_ENDPOINT_URL_S3", "HOME"};

// An environment without any AWS variable and a HOME of its own; the old
// one is put back at the end.
struct CleanEnvironment {
  test::TempDir home;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  CleanEnvironment() {
    for (const char* name : kVariables) {
      const char* v = std::getenv(name);
      saved.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
    setenv("HOME", home.path().c_str(), 1);
    std::filesystem::create_directories(home.path() / ".aws");
  }
  ~CleanEnvironment() {
    for (const auto& [name, v] : saved)
      if (v)
        setenv(name.c_str(), v->c_str(), 1);
      else
        unsetenv(name.c_str());
  }
  void credentials(const std::string& text) {
    test::write_file(home.path() / ".aws" / "credentials", text);
  }
  void config(const std::string& text) { test::write_file(home.path() / ".aws" / "config", text); }
};

}  // namespace

TEST_CASE("s3 credentials: none anywhere is anonymous, us-east-1, AWS's endpoint") {
  CleanEnvironment e;
  const stowage_s3::Config c = stowage_s3::find_config();
  CHECK(c.credentials.anonymous());
  CHECK(c.region == "us-east-1");
  CHECK(c.endpoint == "https://s3.us-east-1.amazonaws.com");
  CHECK_FALSE(c.path_style);
}

TEST_CASE("s3 credentials: the environment's key wins over the files") {
  CleanEnvironment e;
  e.credentials("[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n");
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
  setenv("AWS_SESSION_TOKEN", "ENVTOKEN", 1);
  const stowage_s3::Config c = stowage_s3::find_config();
  CHECK(c.credentials.access_key == "ENVKEY");
  CHECK(c.credentials.secret_key == "ENVSECRET");
  CHECK(c.credentials.session_token == "ENVTOKEN");
}

TEST_CASE("s3 credentials: the default profile of ~/.aws/credentials and ~/.aws/config") {
  CleanEnvironment e;
  e.credentials(
      "# a comment\n[other]\naws_access_key_id = OTHER\naws_secret_access_key = OTHERS\n\n"
      "[default]\naws_access_key_id = DEFKEY \naws_secret_access_key=DEFSECRET\n"
      "aws_session_token = DEFTOKEN\n");
  e.config(
      "[default]\nregion = eu-west-2\ns3 =\n  addressing_style = path\n"
      "[profile other]\nregion = ap-south-1\n");
  const stowage_s3::Config c = stowage_s3::find_config();
  CHECK(c.profile == "default");
  CHECK(c.credentials.access_key == "DEFKEY");
  CHECK(c.credentials.secret_key == "DEFSECRET");
  CHECK(c.credentials.session_token == "DEFTOKEN");
  CHECK(c.region == "eu-west-2");
  CHECK(c.endpoint == "https://s3.eu-west-2.amazonaws.com");
}

TEST_CASE("s3 credentials: AWS_PROFILE, [profile NAME] in config, endpoint_url, path style") {
  CleanEnvironment e;
  e.credentials("[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = DEFSECRET\n");
  e.config(
      "[profile rgw]\nregion = zone-a\nendpoint_url = http://127.0.0.1:7480/\n"
      "aws_access_key_id = RGWKEY\naws_secret_access_key = RGWSECRET\n");
  setenv("AWS_PROFILE", "rgw", 1);
  const stowage_s3::Config c = stowage_s3::find_config();
  CHECK(c.credentials.access_key == "RGWKEY");
  CHECK(c.credentials.secret_key == "RGWSECRET");
  CHECK(c.region == "zone-a");
  CHECK(c.endpoint == "http://127.0.0.1:7480");
  CHECK(c.path_style);
}

TEST_CASE("s3 credentials: AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE move the files") {
  CleanEnvironment e;
  e.credentials("[default]\naws_access_key_id = HOMEKEY\naws_secret_access_key = HOMESECRET\n");
  test::write_file(e.home.path() / "creds",
                   "[p]\naws_access_key_id = K\naws_secret_access_key = S\n");
  test::write_file(e.home.path() / "conf", "[profile p]\nregion = r-1\n");
  setenv("AWS_SHARED_CREDENTIALS_FILE", (e.home.path() / "creds").c_str(), 1);
  setenv("AWS_CONFIG_FILE", (e.home.path() / "conf").c_str(), 1);
  setenv("AWS_PROFILE", "p", 1);
  const stowage_s3::Config c = stowage_s3::find_config();
  CHECK(c.credentials.access_key == "K");
  CHECK(c.region == "r-1");
}

TEST_CASE("s3 credentials: region and endpoint from the environment come first") {
  CleanEnvironment e;
  e.config("[default]\nregion = from-file\nendpoint_url = http://file:1\n");
  SUBCASE("AWS_REGION, then AWS_DEFAULT_REGION") {
    setenv("AWS_DEFAULT_REGION", "default-region", 1);
    CHECK(stowage_s3::find_config().region == "default-region");
    setenv("AWS_REGION", "region", 1);
    CHECK(stowage_s3::find_config().region == "region");
  }
  SUBCASE("AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL") {
    setenv("AWS_ENDPOINT_URL", "http://all:2", 1);
    CHECK(stowage_s3::find_config().endpoint == "http://all:2");
    setenv("AWS_ENDPOINT_URL_S3", "http://s3only:3/", 1);
    CHECK(stowage_s3::find_config().endpoint == "http://s3only:3");
    CHECK(stowage_s3::find_config().path_style);
  }
  SUBCASE("the profile's") {
    CHECK(stowage_s3::find_config().region == "from-file");
    CHECK(stowage_s3::find_config().endpoint == "http://file:1");
  }
}

TEST_CASE("s3 credentials: AWS_NO_SIGN_REQUEST=YES is anonymous even with a key") {
  CleanEnvironment e;
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
  setenv("AWS_NO_SIGN_REQUEST", "YES", 1);
  CHECK(stowage_s3::find_config().credentials.anonymous());
}

TEST_CASE("s3 credentials: a missing named profile or half a key is an error without the secret") {
  CleanEnvironment e;
  SUBCASE("a profile nowhere") {
    setenv("AWS_PROFILE", "nowhere", 1);
    CHECK_THROWS_WITH_AS(stowage_s3::find_config(), doctest::Contains("\"nowhere\""),
                         std::runtime_error);
  }
  SUBCASE("a secret without its key id") {
    setenv("AWS_SECRET_ACCESS_KEY", "TOPSECRET", 1);
    try {
      stowage_s3::find_config();
      FAIL("no error");
    } catch (const std::runtime_error& err) {
      const std::string what = err.what();
      CHECK(what.find("no access key id") != std::string::npos);
      CHECK(what.find("TOPSECRET") == std::string::npos);
    }
  }
}
