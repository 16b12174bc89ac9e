"""Sets up a moto server for the object-storage tests.

Creates the bucket and two IAM users: `writer` (every S3 action) and `reader` (may list and read, not write).
Prints their keys as JSON. The tests turn moto's IAM checks on (POST /moto-api/reset-auth) while they need
wrong credentials and missing permissions to fail as they do on AWS.
"""
import json
import sys

import boto3

endpoint, bucket = sys.argv[1], sys.argv[2]
setup = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
boto3.client("s3", **setup).create_bucket(Bucket=bucket)
iam = boto3.client("iam", **setup)
policies = {
    "writer": ["s3:*"],
    # s3:HeadBucket is what moto asks for a HEAD on the bucket (AWS asks for s3:ListBucket).
    "reader": ["s3:ListBucket", "s3:HeadBucket", "s3:GetObject"],
}
keys = {}
for user, actions in policies.items():
    iam.create_user(UserName=user)
    document = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
    iam.put_user_policy(UserName=user, PolicyName="exports", PolicyDocument=json.dumps(document))
    key = iam.create_access_key(UserName=user)["AccessKey"]
    keys[user] = {"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}
print(json.dumps(keys))
